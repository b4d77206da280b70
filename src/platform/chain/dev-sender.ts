/**
 * Sending from a dev chain's funded account: a provider tuned for dev chains, and one send at a time
 * per account so concurrent callers never pick the same pending nonce.
 */
import { ethers } from 'ethers';

/**
 * Read-after-write must not see ethers' 250 ms call cache, and tx.wait() should notice an
 * interval-mined block sooner than the default 4 s polling would.
 */
function provider(rpcUrl: string): ethers.JsonRpcProvider {
  return new ethers.JsonRpcProvider(rpcUrl, undefined, { cacheTimeout: -1, pollingInterval: 100 });
}

export async function withWallet<T>(rpcUrl: string, privateKey: string, fn: (wallet: ethers.Wallet) => Promise<T>): Promise<T> {
  const p = provider(rpcUrl);
  try {
    return await fn(new ethers.Wallet(privateKey, p));
  } finally {
    p.destroy();
  }
}

/**
 * Sends from one account go one at a time (per chain) up to their broadcast, so concurrent
 * callers in this process never pick the same pending nonce.
 */
const senderQueues = new Map<string, Promise<unknown>>();
export async function serialized<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = senderQueues.get(key) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  senderQueues.set(key, settled);
  try {
    return await run;
  } finally {
    if (senderQueues.get(key) === settled) senderQueues.delete(key);
  }
}
/**
 * Another process (a parallel test file, `keel dev fund` beside a server) may take the same pending
 * nonce of the shared funded account; the loser simply tries again with the next one.
 */
export async function retryNonceClash<T>(send: () => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await send();
    } catch (e) {
      const code = (e as { code?: string }).code;
      const clash = code === 'NONCE_EXPIRED' || code === 'REPLACEMENT_UNDERPRICED' || /nonce/i.test((e as Error).message ?? '');
      if (!clash || i >= attempts) throw e;
      await new Promise((r) => setTimeout(r, 20 * i));
    }
  }
}
export const senderKey = (rpcUrl: string, address: string) => `${rpcUrl}|${address.toLowerCase()}`;
