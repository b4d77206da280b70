import { ethers } from 'ethers';
import { retryNonceClash, senderKey, serialized, withWallet } from './dev-sender';

const ERC20_TRANSFER_ABI = ['function transfer(address to, uint256 amount) returns (bool)'];
/** Above what a test token's transfer costs to a new holder (about 52,000). */
const TOKEN_TRANSFER_GAS_LIMIT = 120_000n;

export interface FaucetRequest {
  to: string;
  /** Absent: native coin (18 decimals). */
  token?: { address: string; decimals: number };
  /** Decimal string in whole units, e.g. "12.5"; parsed with ethers.parseUnits, never as a float. */
  amount: string;
  /** Wait for the transaction to be mined (default true). False returns right after broadcast. */
  wait?: boolean;
}

/** Sends native coin or an ERC20 from the funded account. */
export async function fundFromFaucet(rpcUrl: string, fundedPrivateKey: string, req: FaucetRequest): Promise<{ txHash: string }> {
  const to = ethers.getAddress(req.to);
  if (typeof req.amount !== 'string') throw new Error('fundFromFaucet: amount must be a decimal string');
  const value = ethers.parseUnits(req.amount, req.token ? req.token.decimals : 18);
  if (value <= 0n) throw new Error(`fundFromFaucet: amount must be positive, got ${req.amount}`);
  return withWallet(rpcUrl, fundedPrivateKey, async (wallet) => {
    const send = (): Promise<ethers.TransactionResponse> => {
      if (!req.token) return wallet.sendTransaction({ to, value });
      const token = new ethers.Contract(ethers.getAddress(req.token.address), ERC20_TRANSFER_ABI, wallet);
      // A fixed limit, not an estimate: the recipient's balance can go to zero between an estimate and
      // the send (a sweep), and a transfer to an empty balance costs ~20,000 gas more than estimated.
      return token.transfer(to, value, { gasLimit: TOKEN_TRANSFER_GAS_LIMIT }) as Promise<ethers.ContractTransactionResponse>;
    };
    for (let attempt = 1; ; attempt++) {
      const tx = await serialized(senderKey(rpcUrl, wallet.address), () => retryNonceClash(send));
      if (req.wait === false) return { txHash: tx.hash };
      try {
        await tx.wait();
        return { txHash: tx.hash };
      } catch (e) {
        // Another process sent from the account with the same nonce and a higher fee, and its
        // transaction replaced this one: nothing of this request was sent, so it is sent again.
        const replaced = e as { code?: string; reason?: string; replacement?: { hash: string } };
        if (replaced.code !== 'TRANSACTION_REPLACED' || attempt >= 5) throw e;
        if (replaced.reason === 'repriced' && replaced.replacement) return { txHash: replaced.replacement.hash };
      }
    }
  });
}
