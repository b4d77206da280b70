import type { Knex } from 'knex';
import { OPEN_ITEM_STATUSES } from './transfer.domain';

/**
 * Narrows a query of transfer_items (as `i`) to the lines the address's balance at the chain's head
 * still holds but will send: not final, and not yet seen in a block. A line the sender has seen mined
 * (its block recorded while it waits for confirmations; cleared if a reorg drops it) is already out
 * of that balance: counting it again would refuse a send the address can pay, and leave a deposit
 * that arrives meanwhile unswept.
 */
export function stillInBalance(q: Knex.QueryBuilder): Knex.QueryBuilder {
  return q.whereIn('i.status', OPEN_ITEM_STATUSES).whereNull('i.blockNumber');
}

/**
 * What is already on its way out of an address and still in its balance at the chain's head, by
 * asset id (stillInBalance; an asset with nothing on its way is absent); with `callTo`, only the
 * lines that are calls of that contract (the swaps through one DEX router).
 */
export async function inFlightByAsset(db: Knex | Knex.Transaction, address: string, blockchainId: string, assetIds: string[], callTo?: string): Promise<Map<string, bigint>> {
  const rows: { assetId: string; total: string }[] = await db('transfer_items as i')
    .join('transfers as t', 't.id', 'i.transferId')
    .where({ 't.fromAddress': address, 't.blockchainId': blockchainId })
    .whereIn('i.assetId', assetIds)
    .modify((q) => (callTo ? q.where('i.callTo', callTo) : q))
    .modify(stillInBalance)
    .groupBy('i.assetId')
    .select('i.assetId', db.raw('sum(i.raw_amount)::text as total'));
  return new Map(rows.map((r) => [r.assetId, BigInt(r.total)]));
}

/** A line still to leave an address (stillInBalance), as the sender will sign it; `gasLimit` and `maxFeePerGas` once it is signed (EVM). */
export interface LineStillToSend {
  assetId: string;
  fromAddress: string;
  recipient: string;
  rawAmount: string;
  tokenId: string | null;
  callTo: string | null;
  callData: string | null;
  callValue: string | null;
  gasLimit: string | null;
  maxFeePerGas: string | null;
}

/** The lines an address's balance at the chain's head still holds but will send (stillInBalance), for what they will spend of its coin. */
export async function linesStillToSend(db: Knex | Knex.Transaction, address: string, blockchainId: string): Promise<LineStillToSend[]> {
  return db('transfer_items as i')
    .join('transfers as t', 't.id', 'i.transferId')
    .where({ 't.fromAddress': address, 't.blockchainId': blockchainId })
    .modify(stillInBalance)
    .select('i.assetId', 't.fromAddress', 'i.recipient', 'i.rawAmount', 'i.tokenId', 'i.callTo', 'i.callData', 'i.callValue', 'i.gasLimit', 'i.maxFeePerGas');
}
