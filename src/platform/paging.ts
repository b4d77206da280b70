import type { DateRange } from './db/date-range';

/** The spec's page bounds: limit 1..100 (default 50), offset >= 0 (default 0). */
export const PAGE_LIMIT = { min: 1, max: 100, default: 50 } as const;
export const PAGE_OFFSET = { min: 0, default: 0 } as const;

/** Which slice of a list a caller asked for, within the spec's date range on the creation time. */
export interface PageWindow extends DateRange {
  limit: number;
  offset: number;
}

export interface PageResult<T> {
  items: T[];
  total: number;
  hasMore: boolean;
  limit: number;
  offset: number;
}

export function toPage<T>(items: T[], total: number, page: PageWindow): PageResult<T> {
  return { items, total, hasMore: page.offset + items.length < total, limit: page.limit, offset: page.offset };
}
