import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ethers } from 'ethers';
import { createDb } from '../src/platform/db/knex';
import { devChainAccount } from '../src/platform/chain/dev-accounts';
import { mine, setAutomine } from '../test/support/chain-controls';
import { startOwnChain } from '../test/support/own-chain';
import { createBenchOrganization, freshDatabase, keelCli, loadRun, median, startKeelProcess, stopProcess } from './support';

const CHAIN_ID = 31_397;
const erc20 = new ethers.Interface(['function transfer(address to, uint256 amount) returns (bool)']);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Payment links end to end, against a Keel (api and worker roles, default poll intervals) in its
 * own process and a local Hardhat chain that mines when told to, one confirmation, and
 * PAYMENT_CONFIRMATIONS=1 (so the block that carries a payment is the one that confirms it).
 * - Latency: for each of `samples` checkouts (started through the public API, paid 5 USDC from a
 *   dev account), from the moment the confirming block is mined (the mining call returns) to
 *   (a) the payment-link transfer row being committed (polled in PostgreSQL every 2 ms) and
 *   (b) the public session endpoint the hosted page polls answering PAID (polled every 5 ms).
 *   The page itself polls once a second, which adds 0-1 s (0.5 s on average) on top of (b).
 * - Throughput: checkouts created per second through POST /v1/checkout/links/{slug}/sessions
 *   (autocannon, `connections` connections, `seconds` seconds; each creates a fresh HD deposit
 *   address and the checkout row); median of `runs`.
 */
export async function run(args: string[]): Promise<object> {
  const samples = Number(args[0] ?? 50);
  const runs = Number(args[1] ?? 3);
  const seconds = Number(args[2] ?? 5);
  const connections = Number(args[3] ?? 10);
  // A port the OS picks: several benchmarks may run at once on one machine.
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;

  const dataDir = mkdtempSync(join(tmpdir(), 'keel-bench-checkout-'));
  const { chain, tokens, keelChains } = await startOwnChain(CHAIN_ID, 1, dataDir);
  const env = {
    DATABASE_URL: await freshDatabase('keel_bench_checkout'),
    REDIS_PREFIX: 'keelbench:checkout:',
    CORE_PORT: String(port),
    HOST: '127.0.0.1',
    KEEL_ROLES: 'api,worker',
    KEEL_CHAINS: keelChains,
    KEEL_MASTER_KEY: randomBytes(32).toString('hex'),
    PAYMENT_CONFIRMATIONS: '1',
    CHECKOUT_RATE_LIMIT_PER_MINUTE: '10000000',
  };
  keelCli(['migrate'], env);
  const org = createBenchOrganization(env);
  const child = await startKeelProcess(env, `${base}/ready`);
  const db = createDb(env.DATABASE_URL, 4);
  const headers = { apiKey: org.adminKey, orgId: org.orgId, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown, auth = true) => {
    const res = await fetch(`${base}${path}`, { method, headers: auth ? headers : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await res.json()) as { data: any };
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  try {
    const blockchainId = (await call('GET', '/v1/blockchains'))[0].id;
    const usdc = (await call('GET', `/v1/assets?blockchainId=${blockchainId}&symbol=USDC`))[0];
    const wallet = await call('POST', '/v1/master-wallets', { blockchainId, name: 'bench' });
    const link = await call('POST', '/v1/payment/links', { name: 'Bench', currency: 'USD', amount: '5', evmSettlementWalletId: wallet.id });
    const sessionBody = { blockchainId, assetId: usdc.id };

    // Latency: one payment per block, the block mined by the benchmark.
    const provider = new ethers.JsonRpcProvider(chain.rpcUrl, CHAIN_ID, { staticNetwork: true, cacheTimeout: -1 });
    const payer = new ethers.Wallet(devChainAccount(0).privateKey, provider);
    const token = tokens.find((t) => t.symbol === 'USDC')!.address;
    await setAutomine(chain.rpcUrl, false);
    let nonce = await provider.getTransactionCount(payer.address, 'pending');
    const fees = await provider.getFeeData();
    const recorded: number[] = [];
    const paid: number[] = [];
    for (let i = 0; i < samples; i++) {
      const session = await call('POST', `/v1/checkout/links/${link.slug}/sessions`, sessionBody, false);
      const raw = await payer.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: nonce++, to: token, data: erc20.encodeFunctionData('transfer', [session.depositAddress, 5_000_000n]), gasLimit: 60_000n, maxFeePerGas: fees.maxFeePerGas! * 4n, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! });
      await provider.send('eth_sendRawTransaction', [raw]);
      await mine(chain.rpcUrl, 1);
      const minedAt = performance.now();
      let recordedAt = 0;
      for (;;) {
        if (!recordedAt && (await db('checkout_transfers').where({ checkoutId: session.id }).first('id'))) recordedAt = performance.now();
        if (recordedAt) {
          const status = (await call('GET', `/v1/checkout/links/${link.slug}/sessions/${session.id}`, undefined, false)).status;
          if (status === 'PAID') break;
          await new Promise((r) => setTimeout(r, 5));
        } else {
          await new Promise((r) => setTimeout(r, 2));
        }
      }
      recorded.push(recordedAt - minedAt);
      paid.push(performance.now() - minedAt);
    }
    await setAutomine(chain.rpcUrl, true);
    provider.destroy();
    recorded.sort((a, b) => a - b);
    paid.sort((a, b) => a - b);

    // Throughput: checkout sessions created through the public API.
    const created = [];
    for (let r = 0; r < runs; r++) {
      created.push(
        await loadRun({
          url: `${base}/v1/checkout/links/${link.slug}/sessions`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(sessionBody),
          connections,
          duration: seconds,
        }),
      );
    }
    const bad = created.reduce((n, r) => n + r.non2xx + r.errors, 0);
    if (bad) throw new Error(`${bad} checkout creations failed`);
    const round = (v: number) => Math.round(v * 10) / 10;
    return {
      benchmark: 'checkout',
      samples,
      confirmationToTransferRecordedMs: { p50: round(percentile(recorded, 50)), p99: round(percentile(recorded, 99)) },
      confirmationToSessionPaidMs: { p50: round(percentile(paid, 50)), p99: round(percentile(paid, 99)) },
      pagePollIntervalMs: 1000,
      checkoutsCreatedPerSecond: round(median(created.map((r) => r.perSecond))),
      createLatencyP50Ms: median(created.map((r) => r.p50)),
      createLatencyP99Ms: median(created.map((r) => r.p99)),
      runs,
      seconds,
      connections,
    };
  } finally {
    await db.destroy();
    await stopProcess(child);
    await chain.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
