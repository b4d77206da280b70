import type { Knex } from 'knex';
import type { QueryBuilder } from 'objection';
import type { PageWindow } from '../paging';
import { withinDateRange } from './date-range';

export type OrderBy = { column: string; order?: 'asc' | 'desc' }[];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Query = QueryBuilder<any, any> | Knex.QueryBuilder;

/**
 * One page of a filtered query, within the page's date range on `createdAt`, and the size of the
 * whole result. The total is only counted when the page cannot tell it: a page shorter than the
 * limit is the end of the list, so most small lists (an organisation's keys, webhooks, markets)
 * cost one query, not two.
 */
export async function fetchPage<Row>(filtered: Query, page: PageWindow, orderBy: OrderBy): Promise<{ rows: Row[]; total: number }> {
  const query = withinDateRange(filtered.clone(), page);
  const rows = (await (query.clone() as Knex.QueryBuilder).orderBy(orderBy).limit(page.limit).offset(page.offset)) as Row[];
  return { rows, total: totalFromPage(rows.length, page) ?? (await countOf(query)) };
}

/** The size of the whole list when the page's rows tell it (a short page ends the list); undefined: count it. */
export function totalFromPage(rowsOnPage: number, page: PageWindow): number | undefined {
  if (rowsOnPage > 0 && rowsOnPage < page.limit) return page.offset + rowsOnPage;
  if (rowsOnPage === 0 && page.offset === 0) return 0;
  return undefined;
}

async function countOf(query: Query): Promise<number> {
  if ('resultSize' in query) return query.clone().resultSize();
  const [{ count }] = await query.clone().clearSelect().clearOrder().count({ count: '*' });
  return Number(count);
}
