import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ethers } from 'ethers';
import type { Knex } from 'knex';
import { createDb } from '../src/platform/db/knex';
import { WatchedWallets } from '../src/modules/wallets/watched-wallets';
import { devChainAccount } from '../src/platform/chain/dev-accounts';
import { mine, setAutomine } from '../test/support/chain-controls';
import { startOwnChain } from '../test/support/own-chain';
import { BenchOrganization, createBenchOrganization, freshDatabase, keelCli, loadRun, median, startKeelProcess, stopProcess } from './support';

const CHAIN_ID = 31_397;
/** Checkouts open beside the expired ones; the yardstick and the measure each pay `samples` of them (at most half). */
const LIVE_CHECKOUTS = 100;
const EXPIRED_CHECKOUTS = 10_000;
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
 * - Detection beside expired checkouts: 100 live checkouts are opened, `samples` of them paid as
 *   above (the yardstick, in the same run); then 10,000 checkouts of another organisation's link,
 *   expired two days ago, are written with their (active) addresses straight into PostgreSQL (opening
 *   them through the API would take minutes); once a build that retires checkout addresses has
 *   retired them (`retiredMs`), `samples` more of the live ones are paid. The figure is the
 *   detection latency (a) beside them and its ratio to the yardstick.
 * - Throughput: checkouts created per second through POST /v1/checkout/links/{slug}/sessions
 *   (autocannon, `connections` connections, `seconds` seconds; each creates a fresh HD deposit
 *   address and the checkout row); median of `runs`.
 * BENCH_KEEL_ROOT names another built checkout whose Keel to start (bench/support.ts), to measure the
 * build before a change alternately with it.
 */
/**
 * Another organisation's settlement wallet and link with `count` checkouts that expired two days ago,
 * their addresses active (as every build before the retirement left them), written in PostgreSQL.
 */
async function writeExpiredCheckouts(db: Knex, org: BenchOrganization, base: string, blockchainId: string, assetId: string, count: number): Promise<{ walletId: string }> {
  const headers = { apiKey: org.adminKey, orgId: org.orgId, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) => ((await (await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })).json()) as { data: any }).data;
  const wallet = await post('/v1/master-wallets', { blockchainId, name: 'flooded' });
  const link = await post('/v1/payment/links', { name: 'Flooded', currency: 'USD', amount: '5', evmSettlementWalletId: wallet.id });
  const expiresAt = new Date(Date.now() - 2 * 86_400_000);
  for (let from = 0; from < count; from += 1_000) {
    await db.transaction(async (trx) => {
      const indexes = Array.from({ length: Math.min(1_000, count - from) }, (_, i) => from + i + 1);
      const addresses: { id: string; address: string }[] = await trx('addresses')
        .insert(indexes.map((i) => ({ organizationId: org.orgId, masterWalletId: wallet.id, derivationIndex: 1_000_000 + i, address: ethers.getAddress(ethers.hexlify(randomBytes(20))), name: 'Checkout flooded', metadata: {} })))
        .returning(['id', 'address']);
      await trx('checkouts').insert(
        addresses.map((a) => ({ organizationId: org.orgId, paymentLinkId: link.id, masterWalletId: wallet.id, blockchainId, assetId, addressId: a.id, depositAddress: a.address, expectedRaw: '5000000', status: 'EXPIRED', expiresAt })),
      );
    });
  }
  return { walletId: wallet.id };
}

/** How long until the checkout watcher has deactivated every address of the wallet; null for a build without the retirement. */
async function untilRetired(db: Knex, walletId: string): Promise<number | null> {
  if (!(await db.schema.hasColumn('checkouts', 'address_retired_at'))) return null;
  const started = performance.now();
  for (;;) {
    const [{ count }] = await db('addresses').where({ masterWalletId: walletId, isActive: true }).count({ count: '*' });
    if (Number(count) === 0) return performance.now() - started;
    if (performance.now() - started > 120_000) throw new Error(`${count} expired checkout addresses still active after 120 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The set the deposit watcher reads at each step (WatchedWallets, the same query), its size and the median of 20 reads. */
async function watchedSet(db: Knex, blockchainId: string): Promise<{ size: number; medianMs: number }> {
  const wallets = new WatchedWallets(db);
  const times = [];
  let size = 0;
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    size = (await wallets.on(blockchainId)).size;
    times.push(performance.now() - started);
  }
  return { size, medianMs: median(times) };
}

export async function run(args: string[]): Promise<object> {
  const samples = Math.min(Number(args[0] ?? 50), LIVE_CHECKOUTS / 2);
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
    CHECKOUT_LINK_SESSIONS_PER_MINUTE: '10000000',
    CHECKOUT_CLIENT_LINK_SESSIONS_PER_MINUTE: '10000000',
    CHECKOUT_SESSION_READS_PER_MINUTE: '10000000',
  };
  keelCli(['migrate'], env);
  const org = createBenchOrganization(env);
  // The organisation whose link is flooded with sessions (made now: `keel org create` blocks this process).
  const floodedOrg = createBenchOrganization(env);
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
    const openSession = () => call('POST', `/v1/checkout/links/${link.slug}/sessions`, sessionBody, false);
    /** Pays a session in a block of its own; ms from the mining call's return to the transfer row (and, if asked, to the session answering PAID). */
    const payAndTime = async (session: { id: string; depositAddress: string }, untilPaid: boolean) => {
      const raw = await payer.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: nonce++, to: token, data: erc20.encodeFunctionData('transfer', [session.depositAddress, 5_000_000n]), gasLimit: 60_000n, maxFeePerGas: fees.maxFeePerGas! * 4n, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! });
      await provider.send('eth_sendRawTransaction', [raw]);
      await mine(chain.rpcUrl, 1);
      const minedAt = performance.now();
      let recordedAt = 0;
      for (;;) {
        if (!recordedAt && (await db('checkout_transfers').where({ checkoutId: session.id }).first('id'))) recordedAt = performance.now();
        if (recordedAt && !untilPaid) break;
        if (recordedAt) {
          const status = (await call('GET', `/v1/checkout/links/${link.slug}/sessions/${session.id}`, undefined, false)).status;
          if (status === 'PAID') break;
          await new Promise((r) => setTimeout(r, 5));
        } else {
          await new Promise((r) => setTimeout(r, 2));
        }
      }
      return { recorded: recordedAt - minedAt, paid: performance.now() - minedAt };
    };
    const recorded: number[] = [];
    const paid: number[] = [];
    for (let i = 0; i < samples; i++) {
      const timed = await payAndTime(await openSession(), true);
      recorded.push(timed.recorded);
      paid.push(timed.paid);
    }
    recorded.sort((a, b) => a - b);
    paid.sort((a, b) => a - b);

    // Detection beside 10,000 expired checkouts: the yardstick first, with the same live checkouts.
    const live: { id: string; depositAddress: string }[] = [];
    for (let i = 0; i < LIVE_CHECKOUTS; i++) live.push(await openSession());
    const detect = async (sessions: typeof live) => {
      const ms = [];
      for (const session of sessions) ms.push((await payAndTime(session, false)).recorded);
      return ms.sort((a, b) => a - b);
    };
    const yardstick = await detect(live.slice(0, samples));
    const watchedBefore = await watchedSet(db, blockchainId);
    const flood = await writeExpiredCheckouts(db, floodedOrg, base, blockchainId, usdc.id, EXPIRED_CHECKOUTS);
    const retiredMs = await untilRetired(db, flood.walletId);
    const watchedBeside = await watchedSet(db, blockchainId);
    const beside = await detect(live.slice(samples, 2 * samples));
    await setAutomine(chain.rpcUrl, true);
    provider.destroy();

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
      detectionBesideExpiredCheckouts: {
        expiredCheckouts: EXPIRED_CHECKOUTS,
        liveCheckouts: LIVE_CHECKOUTS,
        samples,
        // null: this build does not retire checkout addresses (they stay watched).
        retiredMs: retiredMs === null ? null : Math.round(retiredMs),
        yardstickMs: { p50: round(percentile(yardstick, 50)), p99: round(percentile(yardstick, 99)) },
        besideExpiredMs: { p50: round(percentile(beside, 50)), p99: round(percentile(beside, 99)) },
        // What the deposit watcher reads at each step: the addresses it watches, and the read's median time.
        watchedAddresses: { yardstick: watchedBefore.size, besideExpired: watchedBeside.size },
        watchedSetReadMs: { yardstick: round(watchedBefore.medianMs), besideExpired: round(watchedBeside.medianMs) },
        ratio: { p50: Math.round((percentile(beside, 50) / percentile(yardstick, 50)) * 100) / 100, p99: Math.round((percentile(beside, 99) / percentile(yardstick, 99)) * 100) / 100 },
      },
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
