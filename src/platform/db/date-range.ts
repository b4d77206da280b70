import type { Knex } from 'knex';
import type { QueryBuilder } from 'objection';
import { KeelError } from '../errors';

/** The spec's date-range filter on a list: ISO 8601 `from` and `to`, both inclusive, on the creation time. */
export interface DateRange {
  from?: string | null;
  to?: string | null;
}

const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:T([01]\d|2[0-3]):[0-5]\d(?::([0-5]\d)(?:\.(\d{1,9}))?)?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))?$/i;

/** What `from` and `to` may be: a date (2026-01-31) or a date-time with its zone (2026-01-31T12:00:00Z, …+02:00). */
export const DATE_RANGE_FORMAT = 'an ISO 8601 date (2026-01-31) or date-time with a zone (2026-01-31T12:00:00Z)';

/**
 * A bound names a span as long as its last digit: a date its whole day, a time to the minute that
 * minute, to the millisecond that millisecond. `to` includes its whole span, so a `to` copied from a
 * shown createdAt (milliseconds, while PostgreSQL keeps microseconds) still includes that item.
 */
interface Bound {
  start: number;
  end: number;
}

function boundOf(text: string): Bound | undefined {
  const m = ISO_8601.exec(text);
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  if (m[4] === undefined) return { start: date.getTime(), end: date.getTime() + 86_400_000 };
  const start = new Date(text).getTime();
  const digits = m[6]?.length ?? 0;
  const span = m[5] === undefined ? 60_000 : digits === 0 ? 1000 : Math.max(1, 10 ** (3 - digits));
  return { start, end: start + span };
}

export function isDateRangeBound(value: unknown): boolean {
  return typeof value === 'string' && boundOf(value) !== undefined;
}

/** False only when both bounds are valid and `from` starts after the span of `to`. */
export function isOrderedDateRange(range: DateRange): boolean {
  const from = range.from ? boundOf(range.from) : undefined;
  const to = range.to ? boundOf(range.to) : undefined;
  return !from || !to || from.start < to.end;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Query = QueryBuilder<any, any> | Knex.QueryBuilder;

function parsed(field: 'from' | 'to', text: string | null | undefined): Bound | undefined {
  if (text === undefined || text === null) return undefined;
  const bound = boundOf(text);
  if (!bound) throw KeelError.invalidField(field, `must be ${DATE_RANGE_FORMAT}`);
  return bound;
}

/**
 * Restricts a list query to the range on `column` (its creation time). The arguments validate the
 * bounds first (isDateRangeBound, isOrderedDateRange); a caller that skipped that still gets a 422.
 */
export function withinDateRange<Q extends Query>(query: Q, range: DateRange, column = 'createdAt'): Q {
  const { from, to } = dateRangeLimits(range);
  const q = query as Knex.QueryBuilder;
  if (from) q.where(column, '>=', from);
  if (to) q.where(column, '<', to);
  return query;
}

/** The range as instants: items created at or after `from` and before `to` (null: unbounded); 422 for a malformed bound. */
export function dateRangeLimits(range: DateRange): { from: Date | null; to: Date | null } {
  const from = parsed('from', range.from);
  const to = parsed('to', range.to);
  return { from: from ? new Date(from.start) : null, to: to ? new Date(to.end) : null };
}
