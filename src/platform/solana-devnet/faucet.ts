/**
 * The sandbox Solana network's faucet: SOL as a transfer from the faucet's account, a test token
 * as a mint to the recipient's associated token account (created when it is missing, paid by the
 * faucet). Both are ordinary signed transactions, so deposit scanners see them as they would see any
 * transfer. The faucet's key is published (genesis.ts), so any process can fund over JSON-RPC.
 */
import { randomInt } from 'node:crypto';
import {
  Address,
  Instruction,
  KeyPairSigner,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  Blockhash,
  Base64EncodedWireTransaction,
  createSolanaRpc,
  isSolanaError,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { findAssociatedTokenPda, getCreateAssociatedTokenIdempotentInstruction, getMintToCheckedInstruction } from '@solana-program/token';
import { getSetComputeUnitLimitInstruction } from '@solana-program/compute-budget';
import { TOKEN_PROGRAM } from '../chain-port/spl-token-facts';
import { devnetFaucet } from './genesis';

let grantCounter = randomInt(0, 100_000);

/** How often a grant is signed again when it collides with another process's identical one. */
export const FAUCET_ATTEMPTS = 5;

export interface FaucetGrant {
  to: Address;
  /** Absent: SOL. */
  mint?: { address: Address; decimals: number };
  /** In the smallest unit (lamports, or the token's base units). */
  amount: bigint;
}

/** A signed faucet transaction (base64 wire format) for a blockhash. */
export async function faucetTransaction(faucet: KeyPairSigner, grant: FaucetGrant, latest: { blockhash: string; lastValidBlockHeight: bigint }): Promise<string> {
  if (grant.amount <= 0n) throw new Error('a faucet grant must be positive');
  const instructions: Instruction[] = [
    // Two equal grants under one blockhash would be one transaction (one signature): a compute limit
    // that differs from grant to grant (a counter from a random start) makes them two.
    getSetComputeUnitLimitInstruction({ units: 100_000 + (grantCounter++ % 100_000) }),
  ];
  if (!grant.mint) {
    instructions.push(getTransferSolInstruction({ source: faucet, destination: grant.to, amount: grant.amount }));
  } else {
    const [ata] = await findAssociatedTokenPda({ owner: grant.to, mint: grant.mint.address, tokenProgram: TOKEN_PROGRAM });
    instructions.push(
      getCreateAssociatedTokenIdempotentInstruction({ payer: faucet, ata, owner: grant.to, mint: grant.mint.address }),
      getMintToCheckedInstruction({ mint: grant.mint.address, token: ata, mintAuthority: faucet, amount: grant.amount, decimals: grant.mint.decimals }),
    );
  }
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(faucet, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash({ blockhash: latest.blockhash as Blockhash, lastValidBlockHeight: latest.lastValidBlockHeight }, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
  );
  return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
}

/**
 * Funds from the faucet over JSON-RPC, from any process (`keel dev fund`, tests): the grant is signed
 * here with the published faucet key and sent like any transaction. Answers its signature once the
 * network accepted it (it is in the block in progress).
 */
export async function fundFromSolanaFaucet(rpcUrl: string, grant: FaucetGrant): Promise<string> {
  const rpc = createSolanaRpc(rpcUrl);
  const faucet = await devnetFaucet();
  for (let attempt = 1; ; attempt++) {
    const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'processed' }).send();
    const wire = await faucetTransaction(faucet, grant, latest);
    try {
      return await rpc.sendTransaction(wire as Base64EncodedWireTransaction, { encoding: 'base64', preflightCommitment: 'processed' }).send();
    } catch (e) {
      const cause = (e as { cause?: unknown }).cause;
      if (attempt >= FAUCET_ATTEMPTS || !isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)) throw e;
    }
  }
}
