import { KeelError } from './errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The id rules every service applies: ids are UUIDs, compared in lower case. */
export const Ids = {
  /**
   * A malformed id cannot name anything the caller owns, so it is a 404, exactly like an id that
   * belongs to another organisation.
   */
  uuid(what: string, value: string): string {
    if (!UUID.test(value)) throw KeelError.notFound(what === 'id' ? 'Resource' : what);
    return value.toLowerCase();
  },
  isUuid(value: string): boolean {
    return UUID.test(value);
  },
  /** An optional id used as a filter: absent stays absent; anything but a UUID is 422 naming the field. */
  filter(field: string, value: string | undefined | null): string | undefined {
    if (value === undefined || value === null) return undefined;
    if (!UUID.test(value)) throw KeelError.invalidField(field, 'must be a UUID');
    return value.toLowerCase();
  },
};
