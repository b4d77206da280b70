import { Knex } from 'knex';
import type { EvmChain } from '../../platform/chain-port/evm-chain';

/**
 * The next nonce of a sending address, taken under sender_nonces' row lock: Keel's own count, unless
 * something else has sent from the address meanwhile. Everything Keel signs from a wallet address
 * (transfer lines, settlement deposits) takes its nonce here, so two senders never share one.
 */
export async function takeSenderNonce(trx: Knex.Transaction, blockchainId: string, address: string, chain: Pick<EvmChain, 'pendingNonce'>): Promise<number> {
  const key = { blockchainId, address };
  await trx('sender_nonces').insert({ ...key, nextNonce: 0 }).onConflict(['blockchain_id', 'address']).ignore();
  const row = await trx('sender_nonces').where(key).forUpdate().first();
  const onChain = await chain.pendingNonce(address);
  const nonce = Math.max(Number(row.nextNonce), onChain);
  await trx('sender_nonces').where(key).update({ nextNonce: nonce + 1 });
  return nonce;
}

/**
 * Gives a refused transaction's nonce back, so the address's next transaction does not wait behind
 * a gap: only when it is the newest nonce taken (later ones depend on it otherwise) and `release`
 * (the caller's record of the refusal, in the same transaction) succeeds. Under the row lock.
 */
export async function giveBackNonce(trx: Knex.Transaction, blockchainId: string, address: string, nonce: number, release: () => Promise<boolean>): Promise<boolean> {
  const key = { blockchainId, address };
  const row = await trx('sender_nonces').where(key).forUpdate().first();
  if (!row || Number(row.nextNonce) !== nonce + 1) return false;
  if (!(await release())) return false;
  await trx('sender_nonces').where(key).update({ nextNonce: nonce });
  return true;
}

/**
 * After a reorg (or a dev chain rewound) the address's count on chain can fall below Keel's next
 * nonce with nothing of Keel's pending: the next nonce then follows the chain again, or every later
 * transaction would wait behind a gap for ever. Anything Keel signed from the address and has not
 * seen mined or dropped (a transfer line, a settlement funding transaction) keeps the count: it is
 * still to be broadcast with its nonce.
 */
export async function resyncAfterReorg(trx: Knex.Transaction, blockchainId: string, address: string, chain: Pick<EvmChain, 'pendingNonce'>): Promise<void> {
  const row = await trx('sender_nonces').where({ blockchainId, address }).forUpdate().first();
  if (!row) return;
  const pending = await chain.pendingNonce(address);
  if (pending >= Number(row.nextNonce)) return;
  const line = await trx('transfer_items as i').join('transfers as t', 't.id', 'i.transferId').where({ 't.blockchainId': blockchainId, 't.fromAddress': address }).whereIn('i.status', ['SIGNED', 'SUBMITTED']).first();
  const open = line ?? (await trx('settlement_funding_txs').where({ blockchainId, fromAddress: address }).whereIn('status', ['SIGNED', 'SUBMITTED']).first());
  if (!open) await trx('sender_nonces').where({ blockchainId, address }).update({ nextNonce: pending });
}
