import { FieldError, KeelError } from '../src/platform/errors';

/**
 * A query string a row's arguments read exactly one way: every parameter is one of `known` and is
 * given once. An unknown parameter, a repeated one (`?limit=1&limit=2`) or the array form
 * (`?status[]=x`) is 422 naming it, instead of being ignored or read as whichever value came last.
 */
export function checkQueryParameters(query: Record<string, unknown>, known: ReadonlySet<string>): void {
  const fields: FieldError[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (!known.has(name)) {
      const error = name.endsWith('[]') && known.has(name.slice(0, -2)) ? 'array form is not accepted: give the parameter once' : 'is not a known parameter';
      fields.push({ field: name, error });
    } else if (Array.isArray(value)) {
      fields.push({ field: name, error: 'must be given once (separate list values with commas)' });
    }
  }
  if (fields.length) throw KeelError.validation(fields);
}
