import { Knex } from 'knex';
import type { ethers } from 'ethers';

/**
 * The next nonce of a sending address, taken under sender_nonces' row lock: Keel's own count, unless
 * something else has sent from the address meanwhile. Everything Keel signs from a wallet address
 * (transfer lines, settlement deposits) takes its nonce here, so two senders never share one.
 */
export async function takeSenderNonce(trx: Knex.Transaction, blockchainId: string, address: string, provider: ethers.Provider): Promise<number> {
  const key = { blockchainId, address };
  await trx('sender_nonces').insert({ ...key, nextNonce: 0 }).onConflict(['blockchain_id', 'address']).ignore();
  const row = await trx('sender_nonces').where(key).forUpdate().first();
  const onChain = await provider.getTransactionCount(address, 'pending');
  const nonce = Math.max(Number(row.nextNonce), onChain);
  await trx('sender_nonces').where(key).update({ nextNonce: nonce + 1 });
  return nonce;
}
