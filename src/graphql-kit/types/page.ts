import { Max, Min } from 'class-validator';
import { ArgsType, ClassType, Field, Int, ObjectType } from 'type-graphql';
import { PAGE_LIMIT, PAGE_OFFSET, PageResult, PageWindow } from '../../platform/paging';
import { DateRangeArgs } from './date-range';

/** Offset paging as GraphQL arguments, with the spec's bounds (platform/paging) and the date range. */
@ArgsType()
export class PageArgs extends DateRangeArgs implements PageWindow {
  @Field(() => Int, { defaultValue: PAGE_LIMIT.default })
  @Min(PAGE_LIMIT.min)
  @Max(PAGE_LIMIT.max)
  limit: number = PAGE_LIMIT.default;

  @Field(() => Int, { defaultValue: PAGE_OFFSET.default })
  @Min(PAGE_OFFSET.min)
  offset: number = PAGE_OFFSET.default;
}

/** A page of T; the REST shim reshapes it into the core or order-book list envelope. */
export function Page<T extends object>(itemType: ClassType<T>) {
  @ObjectType({ simpleResolvers: true })
  abstract class PageClass implements PageResult<T> {
    @Field(() => [itemType])
    items!: T[];

    @Field(() => Int)
    total!: number;

    @Field()
    hasMore!: boolean;

    @Field(() => Int)
    limit!: number;

    @Field(() => Int)
    offset!: number;
  }
  return PageClass;
}
