import type { Knex } from 'knex';

/**
 * A chain that was reset (a dev chain started afresh) holds none of the transactions Keel signed on
 * it: its nonce counts start again from the chain's, and every line signed but not final there is
 * queued again, to be signed anew on the new chain (where, as for any queued line, a transfer the
 * chain refuses fails and is refunded). Lines final on the old chain stay as they were: their money
 * left with it. In the reset's transaction; how many lines were queued again.
 */
export async function signAgainAfterChainReset(trx: Knex.Transaction, blockchainId: string): Promise<number> {
  await trx('sender_nonces').where({ blockchainId }).delete();
  return trx('transfer_items')
    .whereIn('transferId', trx('transfers').where({ blockchainId }).select('id'))
    .whereIn('status', ['SIGNED', 'SUBMITTED'])
    .update({
      status: 'QUEUED',
      nonce: null,
      txHash: null,
      rawTx: null,
      validThrough: null,
      replacedTxHashes: [],
      blockNumber: null,
      error: 'the chain was reset: the transaction is gone with it, and is signed again on the new chain',
      updatedAt: trx.fn.now(),
    });
}
