import type { Knex } from 'knex';
import { lineHashes } from '../../platform/chain-port/evm-transactions';

/**
 * A chain that was reset (a dev chain started afresh) holds none of the transactions Keel signed on
 * it: its nonce counts start again from the chain's, and every line signed but not final there is
 * queued again, to be signed anew on the new chain (where, as for any queued line, a transfer the
 * chain refuses fails and is refunded). A line the new chain knows any transaction of is left to
 * the sender, and a line queued again keeps its earlier hashes watched. Lines final on the old chain
 * stay as they were: their money left with it. In the reset's transaction; how many lines were queued again.
 */
export async function signAgainAfterChainReset(trx: Knex.Transaction, blockchainId: string, chainKnows: (txHash: string) => Promise<boolean>): Promise<number> {
  await trx('sender_nonces').where({ blockchainId }).delete();
  const open: { id: string; fromAddress: string; nonce: string | null; txHash: string | null; replacedTxHashes: string[] }[] = await trx('transfer_items as i')
    .join('transfers as t', 't.id', 'i.transferId')
    .where('t.blockchainId', blockchainId)
    .whereIn('i.status', ['SIGNED', 'SUBMITTED'])
    .select('i.id', 't.fromAddress', 'i.nonce', 'i.txHash', 'i.replacedTxHashes')
    .forUpdate();
  let queued = 0;
  for (const line of open) {
    const hashes = lineHashes(line);
    if ((await Promise.all(hashes.map(chainKnows))).some(Boolean)) continue;
    await trx('transfer_items')
      .where({ id: line.id })
      .update({
        status: 'QUEUED',
        nonce: null,
        txHash: null,
        rawTx: null,
        validThrough: null,
        validFrom: null,
        replacedTxHashes: hashes,
        blockNumber: null,
        error: 'the chain was reset: the transaction is gone with it, and is signed again on the new chain',
        updatedAt: trx.fn.now(),
      });
    queued++;
  }
  return queued;
}
