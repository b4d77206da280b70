import { IsOptional, ValidateBy, ValidationArguments } from 'class-validator';
import { ArgsType, Field } from 'type-graphql';
import { DATE_RANGE_FORMAT, DateRange, isDateRangeBound, isOrderedDateRange } from '../../platform/db/date-range';

/** class-validator's name for the format check; the OpenAPI document reads it as `format: date-time`. */
export const IS_DATE_RANGE_BOUND = 'isDateRangeBound';
export const NOT_AFTER_TO = 'notAfterTo';

const IsDateRangeBound = () => ValidateBy({ name: IS_DATE_RANGE_BOUND, validator: { validate: isDateRangeBound, defaultMessage: () => `must be ${DATE_RANGE_FORMAT}` } });

const NotAfterTo = () =>
  ValidateBy({
    name: NOT_AFTER_TO,
    validator: { validate: (_from: unknown, args?: ValidationArguments) => isOrderedDateRange(args?.object as DateRange), defaultMessage: () => 'must not be later than to' },
  });

/** The spec's `from` and `to` on every list: ISO 8601, inclusive, on the creation time. */
@ArgsType()
export class DateRangeArgs implements DateRange {
  @Field(() => String, { nullable: true, description: 'Only items created at or after this instant; a date alone means its midnight UTC' })
  @IsOptional()
  @IsDateRangeBound()
  @NotAfterTo()
  from?: string;

  @Field(() => String, { nullable: true, description: 'Only items created at or before this instant, to the precision given: a date alone includes its whole day (UTC)' })
  @IsOptional()
  @IsDateRangeBound()
  to?: string;
}
