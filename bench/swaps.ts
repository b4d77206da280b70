import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';
import { startKeel } from '../src/app';
import { onboardOrganization } from '../src/modules/api-keys/onboarding';
import { startDevChain } from '../src/platform/chain/devchain';
import { devChainAccount } from '../src/platform/chain/dev-accounts';
import { deployTestTokens } from '../src/platform/chain/test-tokens';
import { deployDex } from '../src/platform/chain/dex';
import { devChainSpec } from '../src/modules/chains/chain-networks';
import { formatChainsConfig } from '../src/modules/chains/chain-config';
import { freshDatabase, median } from './support';

const CHAIN_ID = 31_398;

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

/**
 * Swaps on a local Hardhat chain with Uniswap V2 deployed from the npm artefacts, against one Keel
 * (api and worker roles) in this process, over HTTP on loopback.
 * - Quotes per second: `GET /v1/swaps/quote` (USDC to DAI: three candidate routes read from the
 *   router, reserves of the chosen one) from `concurrency` clients for `seconds`; median of `runs`.
 * - Quote-to-execution latency: `GET /v1/swaps/quote`, then `POST /v1/swaps` (ETH to USDC from a
 *   master wallet: one transaction), until the swap reads EXECUTED (polled every 5 ms). The chain
 *   mines each transaction at once (automine) and one confirmation counts, so the figure is Keel's
 *   own path: the transaction sender's poll (TRANSFER_POLL_INTERVAL_MS, default 500 ms) twice
 *   (sign and send, then see the receipt), plus the work. `samples` swaps; p50 and p99.
 */
export async function run(args: string[]): Promise<object> {
  const seconds = Number(args[0] ?? 5);
  const runs = Number(args[1] ?? 3);
  const concurrency = Number(args[2] ?? 16);
  const samples = Number(args[3] ?? 20);

  const chain = await startDevChain({ chainId: CHAIN_ID, port: 0, blockIntervalMs: 0 });
  const tokens = await deployTestTokens(chain.rpcUrl, devChainAccount(0).privateKey);
  const dex = await deployDex(chain.rpcUrl, devChainAccount(0).privateKey, tokens);
  const config = loadConfig(
    {},
    {
      DATABASE_URL: await freshDatabase('keel_bench_swaps'),
      REDIS_PREFIX: 'keelbench:swaps:',
      KEEL_ROLES: 'api,worker',
      HOST: '127.0.0.1',
      CORE_PORT: 0,
      PRO_PORT: 0,
      LOG_LEVEL: 'silent',
      RATE_LIMIT_SCALE: 1000,
      KEEL_MASTER_KEY: randomBytes(32).toString('hex'),
      KEEL_CHAINS: formatChainsConfig([devChainSpec(CHAIN_ID, chain.rpcUrl, 1, tokens, dex)]),
    },
  );
  const keel = await startKeel(config, createLogger('silent'));
  try {
    const { services, platform } = keel;
    const base = keel.core!.url;
    const org = await onboardOrganization(platform.db, services, { name: 'bench', tier: 'Business', proAccess: false });
    const headers = { apiKey: org.adminKey, orgId: org.orgId, 'content-type': 'application/json' };
    const call = async (method: string, path: string, body?: object) => {
      const res = await fetch(`${base}${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
      const json = (await res.json()) as { data: any };
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json.data;
    };
    const network = services.networks.all()[0];
    const assets = Object.fromEntries((await services.chains.assetsOf(network.blockchainId)).map((a) => [a.symbol, a]));
    const quotePath = `/v1/swaps/quote?fromAssetId=${assets.USDC.id}&toAssetId=${assets.DAI.id}&amount=1000`;

    const rates: number[] = [];
    const quoteLatencies: number[] = [];
    for (let r = 0; r < runs + 1; r++) {
      let done = 0;
      const until = Date.now() + seconds * 1000;
      const started = Date.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (Date.now() < until) {
            const t0 = performance.now();
            await call('GET', quotePath);
            if (r > 0) quoteLatencies.push(performance.now() - t0);
            done++;
          }
        }),
      );
      if (r > 0) rates.push(done / ((Date.now() - started) / 1000)); // the first run warms up
    }

    const wallet = await services.masterWallets.create(org.orgId, { blockchainId: network.blockchainId, name: 'bench' });
    await services.devFaucet.fund({ blockchainId: network.blockchainId, address: wallet.walletAddress, amount: '100' });
    await waitFor(async () => (await platform.db('chain_transfers').where({ toAddress: wallet.walletAddress }).first()) !== undefined);
    const latencies: number[] = [];
    for (let i = 0; i < samples + 1; i++) {
      const t0 = performance.now();
      await call('GET', `/v1/swaps/quote?fromAssetId=${assets.ETH.id}&toAssetId=${assets.USDC.id}&amount=0.1`);
      const swap = await call('POST', '/v1/swaps', { masterWalletId: wallet.id, fromAssetId: assets.ETH.id, toAssetId: assets.USDC.id, amount: '0.1' });
      const final = await waitFor(async () => {
        const s = await services.swaps.get(org.orgId, swap.id);
        return ['EXECUTED', 'FAILED'].includes(s.status) && s;
      });
      if (final.status !== 'EXECUTED') throw new Error(`swap ${swap.id} failed: ${final.error}`);
      if (i > 0) latencies.push(performance.now() - t0);
    }
    const sortedQ = [...quoteLatencies].sort((a, b) => a - b);
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      benchmark: 'swaps',
      chain: 'hardhat (local, automine, 1 confirmation), Uniswap V2 from @uniswap/v2-core and v2-periphery artefacts',
      quotes: { seconds, runs, concurrency, quotesPerSecondRuns: rates.map(Math.round), quotesPerSecondMedian: Math.round(median(rates)), p50Ms: round(percentile(sortedQ, 50)), p99Ms: round(percentile(sortedQ, 99)) },
      quoteToExecution: { samples, transferPollIntervalMs: config.TRANSFER_POLL_INTERVAL_MS, pair: 'ETH to USDC', p50Ms: round(percentile(sorted, 50)), p99Ms: round(percentile(sorted, 99)), maxMs: round(sorted[sorted.length - 1]) },
    };
  } finally {
    await keel.stop();
    await chain.stop();
  }
}

const round = (n: number) => Math.round(n * 10) / 10;

async function waitFor<T>(check: () => Promise<T | false | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}
