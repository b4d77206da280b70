/**
 * Solana for tests, without a cluster where none is needed: a SolanaChain whose node answers as the
 * test says (one behind a load balancer, a lagging one), and a transaction of instructions signed as
 * Keel's and the devnet's are (version 0, a fee payer, a blockhash lifetime).
 */
import {
  Blockhash,
  Instruction,
  RpcTransport,
  TransactionSigner,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { SolanaChain } from '../../src/platform/chain-port/solana-chain';

/** What the node answers one JSON-RPC request with: a result, or a JSON-RPC error. */
export type NodeAnswer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

/** A SolanaChain whose every request is answered by `answer` (given the method and its params); nothing reaches a node. */
export function solanaChainAnswering(answer: (method: string, params: unknown[]) => NodeAnswer): SolanaChain {
  const transport: RpcTransport = async ({ payload }) => {
    const { id, method, params } = payload as { id: number; method: string; params: unknown[] };
    return { jsonrpc: '2.0', id, ...answer(method, params) } as never;
  };
  return new SolanaChain({ rpcUrl: 'http://127.0.0.1:1', transport });
}

/** A version 0 transaction of `instructions`, its fee paid by `feePayer`, valid while `lifetime` is, signed by every signer it names. */
export function signedTransaction(feePayer: TransactionSigner, lifetime: { blockhash: Blockhash; lastValidBlockHeight: bigint }, instructions: Instruction[]) {
  return signTransactionMessageWithSigners(
    pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(feePayer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    ),
  );
}
