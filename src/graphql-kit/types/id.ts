import { IS_UUID, ValidateBy } from 'class-validator';
import { Ids } from '../../platform/ids';

/**
 * An optional id filter argument: a UUID or 422 naming it, checked with the other arguments. Named as
 * class-validator's own UUID check, so the OpenAPI document states `format: uuid` for it.
 */
export const IsIdFilter = () => ValidateBy({ name: IS_UUID, validator: { validate: (value: unknown) => typeof value === 'string' && Ids.isUuid(value), defaultMessage: () => 'must be a UUID' } });
