/**
 * What a Solana transfer's signature "not found" proves (ChainPort.outcome) behind a load balancer,
 * where every request may reach another node: that the transaction never landed only on the word of a
 * node that had reached the finalized slot past its validity. A lagging node's "not found" leaves it
 * pending (sent again as it is, never signed anew): a new transaction could pay the recipient twice.
 */
import { Blockhash, generateKeyPairSigner, getBase64EncodedWireTransaction, getSignatureFromTransaction } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { PreparedTransfer, PreparedTransferStore, sendOnce } from '../../../src/platform/chain-port/chain-port';
import { signedTransaction, solanaChainAnswering } from '../../support/solana-node';

/** Finalized at slot 1040, block height 1001; a transaction valid through height 1000, its blockhash of slot 850. */
const FINAL = { slot: 1040, height: 1001 };
let prepared: PreparedTransfer;

beforeAll(async () => {
  const payer = await generateKeyPairSigner();
  const recipient = (await generateKeyPairSigner()).address;
  const tx = await signedTransaction(payer, { blockhash: '4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn' as Blockhash, lastValidBlockHeight: 1000n }, [getTransferSolInstruction({ source: payer, destination: recipient, amount: 1_000_000n })]);
  prepared = { txId: getSignatureFromTransaction(tx), raw: getBase64EncodedWireTransaction(tx), validThrough: 1000, validFrom: 850, nonce: null, fee: { fee: 5000n, accountCreation: 0n, nativeNeeded: 5000n } };
});

/**
 * Nodes behind a balancer: every one answers the finalized slot and height above; the one answering
 * getSignatureStatuses has reached `statusSlot` only and has not seen the transaction; the one asked
 * for its history has reached `historySlot` at finalized. `asked` lists the methods called.
 */
function balancedNodes({ statusSlot, historySlot = FINAL.slot }: { statusSlot: number; historySlot?: number }) {
  const asked: string[] = [];
  const chain = solanaChainAnswering((method, params) => {
    asked.push(method);
    switch (method) {
      case 'getEpochInfo':
        return { result: { absoluteSlot: FINAL.slot, blockHeight: FINAL.height, epoch: 0, slotIndex: FINAL.slot, slotsInEpoch: 432000, transactionCount: null } };
      case 'getSlot':
        return { result: FINAL.slot };
      case 'getBlockHeight':
        return { result: FINAL.height };
      case 'getSignatureStatuses':
        return { result: { context: { slot: statusSlot }, value: [null] } };
      case 'getFirstAvailableBlock':
        return { result: 0 };
      case 'getSignaturesForAddress': {
        const min = (params[1] as { minContextSlot?: number }).minContextSlot ?? 0;
        if (historySlot < min) return { error: { code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: historySlot } } };
        return { result: [] };
      }
      case 'sendTransaction':
        return { result: prepared.txId };
      default:
        return { error: { code: -32601, message: `Method not found: ${method}` } };
    }
  });
  return { chain, asked };
}

test('a "not found" from a node behind the finalized slot past the transaction\'s validity is no proof: pending, not expired', async () => {
  expect(await balancedNodes({ statusSlot: 900 }).chain.outcome(prepared)).toEqual({ state: 'pending' });
});

test('the same "not found" from a node at or past that slot, its status cache reaching the blockhash, is expired', async () => {
  expect(await balancedNodes({ statusSlot: FINAL.slot }).chain.outcome(prepared)).toEqual({ state: 'expired' });
  expect(await balancedNodes({ statusSlot: FINAL.slot + 5 }).chain.outcome(prepared)).toEqual({ state: 'expired' });
});

test('past the status cache, a history node behind the finalized slot is no witness either: pending', async () => {
  const old = { ...prepared, validFrom: 700 };
  expect(await balancedNodes({ statusSlot: FINAL.slot + 5, historySlot: 1000 }).chain.outcome(old)).toEqual({ state: 'pending' });
  expect(await balancedNodes({ statusSlot: FINAL.slot + 5 }).chain.outcome(old)).toEqual({ state: 'expired' });
});

test('a retry behind a lagging node sends the recorded transaction again and neither signs nor records a new one', async () => {
  const { chain, asked } = balancedNodes({ statusSlot: 900 });
  const saves: PreparedTransfer[] = [];
  const store: PreparedTransferStore = { load: async () => prepared, save: async (p) => void saves.push(p) };
  const sent = await sendOnce(chain, await generateKeyPairSigner(), { to: '11111111111111111111111111111111', asset: { kind: 'native' }, amount: 1n }, store);
  expect(sent).toBe(prepared);
  expect(saves).toEqual([]);
  expect(asked).not.toContain('getLatestBlockhash');
  expect(asked.filter((m) => m === 'sendTransaction')).toHaveLength(1);
});
