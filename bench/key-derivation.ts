import { randomBytes } from 'node:crypto';
import { ethers } from 'ethers';
import { ACCOUNT_PATH, KeyThread } from '../src/modules/wallets/key-thread';
import { median } from './support';

/**
 * What HD key derivation costs and what it does to the event loop, per job (a new wallet, a
 * signing key from a mnemonic, an address from an account's extended public key), medians of
 * `runs` runs of `jobs` jobs each:
 * - `onTheLoop`: ethers called on the event loop, as Keel did before the key thread: milliseconds
 *   per job, and the gaps between the ticks of a 1 ms timer meanwhile (p50, p90, max: how long a
 *   request of the process would have waited);
 * - `onTheKeyThread`: the same jobs through `KeyThread`, one after the other: milliseconds per job
 *   (the thread's round trip included), and the timer's gaps meanwhile;
 * - `idle`: the yardstick, jobs that only wait 5 ms: the gaps this machine gives an idle loop.
 */
export async function run(args: string[]): Promise<object> {
  const jobs = Number(args[0] ?? 20);
  const runs = Number(args[1] ?? 3);
  const phrase = ethers.Mnemonic.fromEntropy(randomBytes(32)).phrase;
  const accountXpub = ethers.HDNodeWallet.fromPhrase(phrase, undefined, ACCOUNT_PATH).neuter().extendedKey;
  const onTheLoop: Record<string, (i: number) => unknown> = {
    newWallet: () => ethers.HDNodeWallet.fromMnemonic(ethers.Mnemonic.fromEntropy(randomBytes(32)), ACCOUNT_PATH).deriveChild(0).address,
    privateKey: (i) => ethers.HDNodeWallet.fromPhrase(phrase, undefined, `${ACCOUNT_PATH}/${i}`).privateKey,
    address: (i) => ethers.HDNodeWallet.fromExtendedKey(accountXpub).deriveChild(i).address,
  };
  const thread = new KeyThread();
  const onTheKeyThread: Record<string, (i: number) => Promise<unknown>> = {
    newWallet: () => thread.run('newWallet', {}),
    privateKey: (i) => thread.run('privateKey', { phrase, index: i }),
    address: (i) => thread.run('address', { accountXpub, index: i }),
  };
  await onTheKeyThread.address(0); // the thread started and warm

  const measure = async (job: (i: number) => unknown) => {
    const perJob: number[] = [];
    const gaps = { p50: [] as number[], p90: [] as number[], max: [] as number[] };
    for (let r = 0; r <= runs; r++) {
      // A 1 ms ticker: the gaps between its ticks are how long the loop kept a request waiting.
      let last = process.hrtime.bigint();
      const ticks: number[] = [];
      const ticker = setInterval(() => {
        const now = process.hrtime.bigint();
        ticks.push(Number(now - last) / 1e6);
        last = now;
      }, 1);
      const started = process.hrtime.bigint();
      for (let i = 0; i < jobs; i++) {
        await job(i);
        // Between jobs the loop runs its timers, as it would serve requests between two signatures.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const ms = Number(process.hrtime.bigint() - started) / 1e6 / jobs;
      clearInterval(ticker);
      if (r === 0) continue; // warm-up
      perJob.push(ms);
      ticks.sort((x, y) => x - y);
      gaps.p50.push(ticks[Math.floor(ticks.length * 0.5)]);
      gaps.p90.push(ticks[Math.floor(ticks.length * 0.9)]);
      gaps.max.push(ticks[ticks.length - 1]);
    }
    return { msPerJob: round(median(perJob)), eventLoopGapMs: { p50: round(median(gaps.p50)), p90: round(median(gaps.p90)), max: round(median(gaps.max)) } };
  };

  // The yardstick: the longest wait of a loop with nothing to do but jobs that only wait 5 ms (this machine's own noise).
  const result: Record<string, object> = { idle: await measure(() => new Promise((resolve) => setTimeout(resolve, 5))) };
  try {
    for (const name of Object.keys(onTheLoop)) result[name] = { onTheLoop: await measure(onTheLoop[name]), onTheKeyThread: await measure(onTheKeyThread[name]) };
  } finally {
    await thread.close();
  }
  return { benchmark: 'key-derivation', jobsPerRun: jobs, runs, ...result };
}

const round = (x: number) => Math.round(x * 100) / 100;
