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
