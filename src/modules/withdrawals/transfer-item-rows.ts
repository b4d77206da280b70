import type { Knex } from 'knex';
import { OPEN_ITEM_STATUSES, type TransferKind } from './transfer.domain';
import type { BlockWindow, WalletsInUse } from '../wallets';

/* A queued transfer's items, as modules that queue through TransferService amend them, in the caller's transaction: the transfer_items table is this module's. */

/** Makes an item wait for another to be sent first. */
export async function setItemPredecessor(trx: Knex | Knex.Transaction, itemId: string, afterItemId: string): Promise<void> {
  await trx('transfer_items').where({ id: itemId }).update({ afterItemId });
}

/** An item's contract call data (null for a plain transfer); undefined when no item has this id. */
export async function itemCallData(trx: Knex | Knex.Transaction, itemId: string): Promise<string | null | undefined> {
  const item = await trx('transfer_items').where({ id: itemId }).first('callData');
  return item?.callData;
}

/** Replaces an item's contract call data (a call re-priced before it is sent). */
export async function setItemCallData(trx: Knex | Knex.Transaction, itemId: string, callData: string): Promise<void> {
  await trx('transfer_items').where({ id: itemId }).update({ callData });
}

/** The transfers with an item waiting on one of these items to be sent first, as a subquery of their ids for the caller's query. */
export function transfersWaitingOn(trx: Knex | Knex.Transaction, itemIds: string[]): Knex.QueryBuilder {
  return trx('transfer_items').whereIn('afterItemId', itemIds).select('transferId');
}

/**
 * Which of these transaction hashes were sent by an item of a transfer of this kind (e.g. Keel's own
 * swaps, gas top-ups), including a line's earlier fee-bumped transactions: whichever was mined.
 */
export async function txHashesSentAs(trx: Knex | Knex.Transaction, kind: TransferKind, txHashes: string[]): Promise<Set<string>> {
  if (!txHashes.length) return new Set();
  const ofKind = () => trx('transfer_items as i').join('transfers as t', 't.id', 'i.transferId').where('t.kind', kind);
  // Two indexed lookups: the lines' current hashes, and the replaced ones of the few lines that have any.
  // (select, not pluck: pluck reads the row before the snake-case mapper names its columns.)
  const [current, replaced]: [{ txHash: string }[], { replacedTxHashes: string[] }[]] = await Promise.all([
    ofKind().whereIn('i.txHash', txHashes).select('i.txHash'),
    ofKind().whereRaw("i.replaced_tx_hashes <> '{}'").whereRaw('i.replaced_tx_hashes && ?::text[]', [txHashes]).select('i.replacedTxHashes'),
  ]);
  const asked = new Set(txHashes);
  return new Set([...current.map((r) => r.txHash), ...replaced.flatMap((r) => r.replacedTxHashes).filter((h) => asked.has(h))]);
}

/** What Keel's lines booked for a transaction they sent, from the wallet that sent it. */
export interface BookedInTransaction {
  txHash: string;
  walletId: string;
  /** The line's asset and amount (taken from custody when it was requested). */
  assetId: string;
  rawAmount: bigint;
  /** A deposit to trading's call value: with a token's deposit, the coin riding with it, which trading took from custody apart (counts for a token line only). */
  coinValue: bigint;
}

/**
 * What the lines that sent any of these transactions (their current hash or an earlier fee-bumped
 * one: whichever was mined) booked, one row per line and hash. Every value-moving transaction Keel
 * sends from a watched address is a line (withdrawals, sweeps, gas top-ups, swaps, deposits to
 * trading, broadcast signing requests), its hash stored before it is sent.
 */
export async function bookedInTransactions(trx: Knex | Knex.Transaction, txHashes: string[]): Promise<BookedInTransaction[]> {
  if (!txHashes.length) return [];
  const lines = () =>
    trx('transfer_items as i')
      .join('transfers as t', 't.id', 'i.transferId')
      .select('i.id', 'i.txHash', 'i.replacedTxHashes', 'i.assetId', 'i.rawAmount', 'i.callValue', 't.kind', trx.raw('coalesce(t.address_id, t.master_wallet_id) AS "walletId"'));
  const rows: { id: string; txHash: string | null; replacedTxHashes: string[]; assetId: string; rawAmount: string; callValue: string | null; kind: string; walletId: string }[] = [
    ...(await lines().whereIn('i.txHash', txHashes)),
    ...(await lines().whereRaw("i.replaced_tx_hashes <> '{}'").whereRaw('i.replaced_tx_hashes && ?::text[]', [txHashes])),
  ];
  const asked = new Set(txHashes);
  const seen = new Set<string>();
  const booked: BookedInTransaction[] = [];
  for (const r of rows) {
    for (const txHash of [r.txHash, ...r.replacedTxHashes].filter((h): h is string => !!h && asked.has(h))) {
      const key = `${r.id}|${txHash}`;
      if (seen.has(key)) continue; // a line found by both lookups
      seen.add(key);
      booked.push({ txHash, walletId: r.walletId, assetId: r.assetId, rawAmount: BigInt(r.rawAmount), coinValue: r.kind === 'trading_deposit' && r.callValue ? BigInt(r.callValue) : 0n });
    }
  }
  return booked;
}

/** What sending a line recorded: the block mined in, the error, its newest signed transaction, the hashes of its other signings (cancellations among them). */
export type ItemRecord = { blockNumber: string | null; error: string | null; rawTx: string | null; replacedTxHashes: string[]; cancelTxHashes: string[] };

/** What sending these items recorded (ItemRecord), by id; unknown ids are absent. */
export async function itemRecords(db: Knex | Knex.Transaction, itemIds: string[]): Promise<Map<string, ItemRecord>> {
  const rows: ({ id: string } & ItemRecord)[] = itemIds.length ? await db('transfer_items').whereIn('id', itemIds).select('id', 'blockNumber', 'error', 'rawTx', 'replacedTxHashes', 'cancelTxHashes') : [];
  return new Map(rows.map(({ id, ...record }) => [id, record]));
}

/** The lines of a chain's transfers not final yet (OPEN_ITEM_STATUSES), of one organisation or of all, with the wallet each is sent from. */
export function openItemsOnChain(db: Knex | Knex.Transaction, blockchainId: string, organizationId?: string): Promise<{ id: string; assetId: string; rawAmount: string; callValue: string | null; kind: string; txHash: string | null; replacedTxHashes: string[] | null; cancelTxHashes: string[]; walletId: string }[]> {
  const q = db('transfer_items as i')
    .join('transfers as t', 't.id', 'i.transferId')
    .where('t.blockchainId', blockchainId)
    .whereIn('i.status', OPEN_ITEM_STATUSES)
    .select('i.id', 'i.assetId', 'i.rawAmount', 'i.callValue', 't.kind', 'i.txHash', 'i.replacedTxHashes', 'i.cancelTxHashes', db.raw('coalesce(t.address_id, t.master_wallet_id) AS "walletId"'));
  if (organizationId) q.where('t.organizationId', organizationId);
  return q;
}

/**
 * What Keel's own lines on a chain still move, whatever the state of the wallets at either end, so
 * the deposit watcher records what reaches them (a sweep's gas top-up to a deactivated address; a
 * transfer from an address to its master wallet deactivated meanwhile): the wallet each line is sent
 * from and the address it pays (in its organisation), of every line sent or about to be (QUEUED,
 * SIGNED, SUBMITTED) and, with `blocks`, of every line mined in those blocks (final before the
 * watcher scanned them: the sender and the watcher each see finality on their own poll); and the
 * addresses a transfer not final is to leave from (a sweep held for approval). Each part an indexed
 * lookup: open lines (transfer_items_open_idx), lines by block (migration 084), open transfers from
 * addresses (migration 056).
 */
export async function linesMovingOn(db: Knex | Knex.Transaction, blockchainId: string, blocks?: BlockWindow): Promise<WalletsInUse> {
  const line = 'SELECT t.organization_id AS "organizationId", coalesce(t.address_id, t.master_wallet_id) AS "walletId", i.recipient FROM transfer_items i JOIN transfers t ON t.id = i.transfer_id WHERE t.blockchain_id = :blockchainId';
  const { rows } = await db.raw<{ rows: { organizationId: string; walletId: string; recipient: string | null }[] }>(
    `${line} AND i.status IN ('QUEUED', 'SIGNED', 'SUBMITTED')
     ${blocks ? `UNION ${line} AND i.block_number > :after AND i.block_number <= :through` : ''}
     UNION SELECT organization_id, address_id, NULL FROM transfers WHERE blockchain_id = :blockchainId AND address_id IS NOT NULL AND status IN ('PENDING_APPROVAL', 'QUEUED', 'SUBMITTED')`,
    { blockchainId, after: blocks?.after ?? 0, through: blocks?.through ?? 0 },
  );
  return {
    walletIds: [...new Set(rows.map((r) => r.walletId))],
    recipients: rows.flatMap((r) => (r.recipient === null ? [] : [{ organizationId: r.organizationId, address: r.recipient }])),
  };
}
