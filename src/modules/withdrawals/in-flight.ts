import type { Knex } from 'knex';
import { OPEN_ITEM_STATUSES } from './transfer.domain';

/**
 * What is already on its way out of an address, by asset id (lines not yet final; an asset with
 * nothing on its way is absent); with `callTo`, only the lines that are calls of that contract (the
 * swaps through one DEX router).
 */
export async function inFlightByAsset(db: Knex | Knex.Transaction, address: string, blockchainId: string, assetIds: string[], callTo?: string): Promise<Map<string, bigint>> {
  const rows: { assetId: string; total: string }[] = await db('transfer_items as i')
    .join('transfers as t', 't.id', 'i.transferId')
    .where({ 't.fromAddress': address, 't.blockchainId': blockchainId })
    .whereIn('i.assetId', assetIds)
    .modify((q) => (callTo ? q.where('i.callTo', callTo) : q))
    .whereIn('i.status', OPEN_ITEM_STATUSES)
    .groupBy('i.assetId')
    .select('i.assetId', db.raw('sum(i.raw_amount)::text as total'));
  return new Map(rows.map((r) => [r.assetId, BigInt(r.total)]));
}
