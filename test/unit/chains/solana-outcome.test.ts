/**
 * What a Solana transfer's signature "not found" proves (ChainPort.outcome) behind a load balancer,
 * where every request may reach another node: that the transaction never landed only on the word of a
 * node that had reached the finalized slot past its validity. A lagging node's "not found" leaves it
 * pending (sent again as it is, never signed anew): a new transaction could pay the recipient twice.
 */
import {
  Blockhash,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { PreparedTransfer, PreparedTransferStore, sendOnce } from '../../../src/platform/chain-port/chain-port';
import { SolanaChain } from '../../../src/platform/chain-port/solana-chain';

/** Finalized at slot 1040, block height 1001; a transaction valid through height 1000, its blockhash of slot 850. */
const FINAL = { slot: 1040, height: 1001 };
let prepared: PreparedTransfer;

beforeAll(async () => {
  const payer = await generateKeyPairSigner();
  const recipient = (await generateKeyPairSigner()).address;
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: '4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn' as Blockhash, lastValidBlockHeight: 1000n }, m),
    (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ source: payer, destination: recipient, amount: 1_000_000n })], m),
  );
  const tx = await signTransactionMessageWithSigners(message);
  prepared = { txId: getSignatureFromTransaction(tx), raw: getBase64EncodedWireTransaction(tx), validThrough: 1000, validFrom: 850, nonce: null, fee: { fee: 5000n, accountCreation: 0n, nativeNeeded: 5000n } };
});

/**
 * Nodes behind a balancer: every one answers the finalized slot and height above; the one answering
 * getSignatureStatuses has reached `statusSlot` only and has not seen the transaction; the one asked
 * for its history has reached `historySlot` at finalized. `asked` lists the methods called.
 */
function balancedNodes({ statusSlot, historySlot = FINAL.slot }: { statusSlot: number; historySlot?: number }) {
  const asked: string[] = [];
  const transport = async ({ payload }: { payload: unknown }) => {
    const { id, method, params } = payload as { id: number; method: string; params: unknown[] };
    asked.push(method);
    const answer = (result: unknown) => ({ jsonrpc: '2.0', id, result }) as never;
    switch (method) {
      case 'getEpochInfo':
        return answer({ absoluteSlot: FINAL.slot, blockHeight: FINAL.height, epoch: 0, slotIndex: FINAL.slot, slotsInEpoch: 432000, transactionCount: null });
      case 'getSlot':
        return answer(FINAL.slot);
      case 'getBlockHeight':
        return answer(FINAL.height);
      case 'getSignatureStatuses':
        return answer({ context: { slot: statusSlot }, value: [null] });
      case 'getFirstAvailableBlock':
        return answer(0);
      case 'getSignaturesForAddress': {
        const min = (params[1] as { minContextSlot?: number }).minContextSlot ?? 0;
        if (historySlot < min) return { jsonrpc: '2.0', id, error: { code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: historySlot } } } as never;
        return answer([]);
      }
      case 'sendTransaction':
        return answer(prepared.txId);
      default:
        return { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } } as never;
    }
  };
  return { chain: new SolanaChain({ rpcUrl: 'http://127.0.0.1:1', transport: transport as never }), asked };
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
