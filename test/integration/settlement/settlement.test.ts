import { ethers } from 'ethers';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { Knex } from 'knex';
import type { TestKeel, TestOrg } from '../../support/keel';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { eventually } from '../../support/eventually';
import { createEthUsdcMarket, ethUsdcTrade, fundedWallet, orderbookBalances } from '../../support/settlement-trading';
import { keelCommand } from '../../support/keel-cli';
import { ApiClient } from '../../support/api-client';
import { mine, revert, setAutomine, snapshot } from '../../support/chain-controls';
import { rpc } from '../../../src/platform/chain/json-rpc';
import { settlementInterface, revertReason } from '../../../src/modules/settlement/settlement-contract';
import type { SettlementDeployment } from '../../../src/modules/settlement/settlement-deployments';
import { walletAccounts } from '../../../src/modules/settlement/wallet-accounts';
import { SettlementWorker } from '../../../src/modules/settlement/settlement-worker';
import { SettlementBatcher } from '../../../src/modules/settlement/batcher';
import { ProceedsRelease } from '../../../src/modules/settlement/proceeds-release';

/**
 * Trades settle on the dev chain in batches through the settlement contract: netted per wallet and
 * asset, replay-proof, a bad trade isolated, a stuck transaction replaced by a fee bump, a reorged
 * batch settled again once, proceeds withdrawable once settled, and the chain reconciling with the
 * ledger throughout.
 */
const CHAIN_ID = 31_371;
const TRADES = 200;

let k: OwnChainKeel;
let t: TestKeel;
let org1: TestOrg;
let org2: TestOrg;
let db: Knex;
let rpcUrl: string;
let blockchainId: string;
let assets: Record<string, { id: string; address: string }>;
let wallets: { id: string; walletAddress: string }[];
let provider: ethers.JsonRpcProvider;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const wallet = (org: TestOrg, name: string, eth: string, usdc: string) => fundedWallet(blockchainId, org, name, eth, usdc);
const balances = orderbookBalances;
const trade = (...args: Parameters<typeof ethUsdcTrade> extends [Knex, ...infer R] ? R : never) => ethUsdcTrade(db, ...args);

/** Takes the chain's settlement lease away from the worker: nothing is batched or sent until resume(). */
async function pause(): Promise<void> {
  await db.raw(
    `INSERT INTO settlement_leases (blockchain_id, holder, expires_at) VALUES (?, 'test', now() + interval '1 hour')
     ON CONFLICT (blockchain_id) DO UPDATE SET holder = 'test', expires_at = now() + interval '1 hour'`,
    [blockchainId],
  );
  await sleep(800); // a step that began before the lease moved finishes
}
const resume = () => db('settlement_leases').where({ holder: 'test' }).delete();

const unsettled = async () => Number((await db('trades').whereNot({ settlementStatus: 'CONFIRMED' }).whereNot({ settlementStatus: 'FAILED' }).count({ n: '*' }))[0].n);
/** Every trade final, and every final batch's wallets handed back what they held in the contract. */
const unreleased = async () =>
  (await db.raw(`SELECT 1 FROM settlement_batches b WHERE b.released_at IS NULL AND (b.status = 'CONFIRMED' OR (b.status = 'FAILED' AND NOT EXISTS (SELECT 1 FROM settlement_batches c WHERE c.parent_batch_id = b.id)))`)).rows.length;
const quiet = () => eventually(async () => (await unsettled()) === 0 && (await unreleased()) === 0, 90_000, 200);
const batchOf = async (tradeId: string) => db('settlement_batches').where({ id: (await db('trades').where({ id: tradeId }).first()).settlementBatchId }).first();
const deployment = async (): Promise<SettlementDeployment> => (await t.keel.services.settlementDeployments.get(t.keel.services.networks.get(blockchainId)!))!;
const reconcile = (organizationId?: string) => t.keel.services.settlementReconciler.reconcile(t.keel.services.networks.get(blockchainId)!, { organizationId });
const transitionsOf = async (batchId: string) => (await db('settlement_batch_transitions').where({ batchId }).orderBy('id')).map((r: { fromStatus: string | null; toStatus: string }) => `${r.fromStatus ?? '-'}>${r.toStatus}`);

beforeAll(async () => {
  k = await startKeelOnOwnChain(CHAIN_ID, 1, {
    SETTLEMENT_ENABLED: true,
    SETTLEMENT_BATCH_SIZE: 50,
    SETTLEMENT_BATCH_MAX_AGE_MS: 300,
    SETTLEMENT_POLL_INTERVAL_MS: 100,
    SETTLEMENT_FEE_BUMP_AFTER_MS: 300,
    SETTLEMENT_RECONCILE_INTERVAL_MS: 500,
    TRANSFER_POLL_INTERVAL_MS: 100,
    CHAIN_POLL_INTERVAL_MS: 100,
    RATE_LIMIT_SCALE: 1000,
  });
  ({ t, blockchainId, assets } = k);
  org1 = k.org;
  org2 = await t.createOrg();
  db = t.keel.platform.db;
  rpcUrl = k.chain.rpcUrl;
  provider = new ethers.JsonRpcProvider(rpcUrl, CHAIN_ID, { staticNetwork: true, cacheTimeout: -1 });
  await createEthUsdcMarket(t, assets);
  wallets = [await wallet(org1, 'A', '20', '100000'), await wallet(org1, 'B', '20', '100000'), await wallet(org2, 'C', '20', '100000'), await wallet(org2, 'D', '20', '100000')];
  await eventually(async () => {
    for (const [i, w] of wallets.entries()) if ((await balances(i < 2 ? org1 : org2, w.id)).USDC?.available !== '100000') return false;
    return true;
  }, 30_000);
  await eventually(() => db('settlement_contracts').where({ blockchainId }).first(), 30_000);
}, 120_000);
afterAll(async () => {
  provider?.destroy();
  await k?.stop();
});

const A = () => ({ org: org1, id: wallets[0].id });
const B = () => ({ org: org1, id: wallets[1].id });
const C = () => ({ org: org2, id: wallets[2].id });
const D = () => ({ org: org2, id: wallets[3].id });

test(`${TRADES} trades between four wallets settle in batches, and every on-chain balance then equals the ledger`, async () => {
  const makers = [A, B];
  const takers = [C, D];
  for (let i = 0; i < TRADES; i++) {
    await trade(makers[i % 2](), takers[(i >> 1) % 2](), i % 3 === 0 ? 'BUY' : 'SELL', String(2000 + (i % 7)), '0.01');
  }
  expect(Number((await db('trades').count({ n: '*' }))[0].n)).toBe(TRADES);
  await quiet();

  const batches = await db('settlement_batches').orderBy('createdAt');
  expect(batches.length).toBeGreaterThanOrEqual(TRADES / 50);
  expect(batches.every((b: { status: string }) => b.status === 'CONFIRMED')).toBe(true);
  expect(batches.reduce((n: number, b: { tradeCount: number }) => n + b.tradeCount, 0)).toBe(TRADES);
  expect(await db('trades').whereNot({ settlementStatus: 'CONFIRMED' }).first()).toBeUndefined();

  // On chain: each trade key settled, nothing left in the contract for the wallets, balances = ledger.
  const contract = new ethers.Contract((await deployment()).address, settlementInterface(), provider);
  for (const tr of await db('trades').select('settlementKey').limit(5)) expect(await contract.isSettled(tr.settlementKey)).toBe(true);
  const report = await reconcile();
  expect(report.differences).toEqual([]);
  expect(report.checked).toBeGreaterThanOrEqual(8);

  // The API: the order-book list envelope, filters, one batch in full, and trades showing their batch.
  const list = await org1.pro.request('GET', '/v1/orderbook/settlement-batches?status=CONFIRMED&market=ETH-USDC&limit=2');
  expect(list.status).toBe(200);
  expect(list.body.meta).toEqual({ total: batches.length, limit: 2, offset: 0 });
  const one = await org1.pro.request('GET', `/v1/orderbook/settlement-batches/${list.body.data[0].id}`);
  expect(one.body.data).toMatchObject({ status: 'CONFIRMED', chainId: String(CHAIN_ID), markets: ['ETH-USDC'], tradeCount: expect.any(Number), txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  expect(one.body.data.tradeIds).toHaveLength(one.body.data.tradeCount);
  expect(Number(one.body.data.gasUsed)).toBeGreaterThan(0);
  expect(Number(one.body.data.feePaid)).toBeGreaterThan(0);
  expect(one.body.data.transitions.map((x: { from: string | null; to: string }) => `${x.from ?? '-'}>${x.to}`)).toEqual(['->BATCHED', 'BATCHED>SUBMITTED', 'SUBMITTED>CONFIRMED']);
  expect((await org1.pro.request('GET', '/v1/orderbook/settlement-batches?status=FAILED')).body.data).toEqual([]);
  const bad = await org1.pro.request('GET', '/v1/orderbook/settlement-batches?status=SETTLED');
  expect(bad.status).toBe(422);
  // Without orderbook_settlement:read: 403 naming it, before any argument is looked at.
  const issued = await t.keel.services.apiKeys.issue({ organizationId: org1.orgId, name: 'no settlement', host: 'pro', scopes: ['orderbook_order:read'], tier: 'Business' });
  const denied = await new ApiClient(t.proUrl, { apiKey: issued.secret, orgId: org1.orgId }).request('GET', '/v1/orderbook/settlement-batches?status=SETTLED');
  expect(denied.status).toBe(403);
  expect(denied.body.error.message).toMatch(/orderbook_settlement:read/);
  expect((await org1.pro.request('GET', '/v1/orderbook/settlement-batches/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  const trades = await org1.pro.request('GET', '/v1/orderbook/markets/ETH-USDC/trades?limit=1');
  expect(trades.body.data[0]).toMatchObject({ settlementStatus: 'CONFIRMED', settlementBatchId: expect.any(String) });
  const openapi = await org1.pro.request('GET', '/v1/openapi.json');
  expect(Object.keys(openapi.body.paths)).toEqual(expect.arrayContaining(['/v1/orderbook/settlement-batches', '/v1/orderbook/settlement-batches/{id}']));
  const gql = await org1.pro.request('POST', '/graphql', { body: { query: `{ settlementBatches(limit: 1) { total items { id status tradeCount transitions { to at } } } }` } });
  expect(gql.body.data.settlementBatches.total).toBe(batches.length);
  // Each transition is an outbox event for the organisations with trades in the batch.
  expect(Number((await db('outbox_events').where({ organizationId: org2.orgId, type: 'settlement_batch.confirmed' }).count({ n: '*' }))[0].n)).toBe(batches.length);
}, 180_000);

test('a replayed batch is refused by the contract: a trade never settles twice', async () => {
  const batch = await db('settlement_batches').where({ status: 'CONFIRMED' }).first();
  const sent = ethers.Transaction.from(batch.rawTx);
  const d = await deployment();
  const replay = provider.call({ from: d.operator.address, to: sent.to!, data: sent.data });
  await expect(replay).rejects.toBeDefined();
  expect(await replay.catch((e) => revertReason(e))).toMatch(/^TradeAlreadySettled\(/);
  // Nobody but the operator may settle at all.
  expect(await provider.call({ from: wallets[0].walletAddress, to: sent.to!, data: sent.data }).catch((e) => revertReason(e))).toBe('NotOperator()');
});

test('a live subscription on the pro host follows the batches holding the organisation\'s trades', async () => {
  const client = createClient({ url: `${t.proUrl.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { apiKey: org2.proKey, orgId: org2.orgId }, retryAttempts: 0, lazyCloseTimeout: 0 });
  try {
    const all: { batchId: string; status: string; previousStatus: string | null; txHash: string | null }[] = [];
    const confirmedOnly: { status: string }[] = [];
    const fail = (e: unknown) => {
      throw e;
    };
    client.subscribe({ query: 'subscription { settlementBatchUpdates { batchId status previousStatus txHash tradeCount } }' }, { next: (v) => all.push((v.data as any).settlementBatchUpdates), error: fail, complete: () => undefined });
    client.subscribe({ query: 'subscription { settlementBatchUpdates(statuses: [CONFIRMED]) { status } }' }, { next: (v) => confirmedOnly.push((v.data as any).settlementBatchUpdates), error: fail, complete: () => undefined });
    await sleep(500); // the subscriptions reach Redis
    const id = await trade(A(), C(), 'SELL', '2000', '0.01');
    await quiet();
    const batch = await batchOf(id);
    await eventually(() => all.some((e) => e.batchId === batch.id && e.status === 'CONFIRMED'), 10_000);
    expect(all.filter((e) => e.batchId === batch.id).map((e) => `${e.previousStatus ?? '-'}>${e.status}`)).toEqual(['->BATCHED', 'BATCHED>SUBMITTED', 'SUBMITTED>CONFIRMED']);
    expect(all.find((e) => e.status === 'CONFIRMED')!.txHash).toBe(batch.txHash);
    await eventually(() => confirmedOnly.length >= 1, 10_000);
    expect(confirmedOnly.every((e) => e.status === 'CONFIRMED')).toBe(true);
  } finally {
    await client.dispose();
  }
});

test('two workers never settle one chain at once: a second waits for the lease, and whichever holds it settles, once', async () => {
  await pause(); // a lease held by someone else ("test"), as another worker would hold it
  const id = await trade(B(), C(), 'SELL', '2000', '0.01');
  const s = t.keel.services;
  const batcher = new SettlementBatcher(db, t.keel.platform.outbox, s.settlementFunding, new ProceedsRelease(db, t.keel.platform.logger), { batchSize: 50, maxAgeMs: 0, bumpAfterMs: 60_000, bumpPercent: 25, reorgWindowBlocks: 64, fundingRetryBaseMs: 60_000, fundingMaxAttempts: 5 }, t.keel.platform.logger);
  const second = new SettlementWorker(db, s.networks, s.settlementDeployments, batcher, s.settlementReconciler, t.keel.platform.metrics, { pollIntervalMs: 100, leaseMs: 2_000, reconcileIntervalMs: 60_000 }, t.keel.platform.logger);
  try {
    await second.tick();
    expect((await db('trades').where({ id }).first()).settlementStatus).toBe('QUEUED');
    // The holder stops renewing: once the lease lapses, the running worker and the second race for it.
    await db('settlement_leases').where({ holder: 'test' }).update({ expiresAt: db.raw("now() - interval '1 second'") });
    await eventually(async () => {
      await second.tick();
      return (await db('trades').where({ id }).first()).settlementStatus === 'CONFIRMED';
    }, 30_000, 20);
    expect((await db('settlement_leases').where({ blockchainId }).first()).holder).not.toBe('test');
    expect(await transitionsOf((await batchOf(id)).id)).toEqual(['->BATCHED', 'BATCHED>SUBMITTED', 'SUBMITTED>CONFIRMED']);
  } finally {
    await second.stop(); // gives up its lease, if it holds it
  }
  await quiet();
});

test('what a wallet bought can be withdrawn once its trade is CONFIRMED, not before', async () => {
  const buyer = await wallet(org1, 'Buyer', '0.2', '5000');
  await eventually(async () => (await balances(org1, buyer.id)).USDC?.available === '5000', 30_000);
  await pause();
  await trade(B(), { org: org1, id: buyer.id }, 'SELL', '2000', '1');
  const external = ethers.Wallet.createRandom().address;
  const withdraw = () => org1.core.request('POST', `/v1/master-wallets/${buyer.id}/transfer`, { body: { assets: [{ assetId: assets.ETH.id, recipient: external, amount: '1' }] } });
  const early = await withdraw();
  expect(early.status).toBe(400);
  expect(early.body.error.code).toBe('INSUFFICIENT_FUNDS');

  await resume();
  await quiet();
  const later = await withdraw();
  expect(later.status).toBe(201);
  await eventually(async () => (await provider.getBalance(external)) === ethers.parseEther('1'), 30_000);
  await eventually(async () => (await reconcile()).differences.length === 0, 30_000);
}, 120_000);

test('a batch with one bad trade isolates it and settles the rest', async () => {
  // A wallet credited in the ledger by hand: it has nothing on chain, so its trade cannot settle.
  const org3 = await t.createOrg();
  const bad = (await org3.core.request('POST', '/v1/master-wallets', { body: { blockchainId, name: 'Hollow' } })).body.data;
  await db.transaction((trx) => t.keel.services.ledger.credit(trx, { organizationId: org3.orgId, walletId: bad.id, assetId: assets.ETH.id, amount: ethers.parseEther('1'), reference: 'test:hollow' }));

  await pause();
  const good: string[] = [];
  for (let i = 0; i < 3; i++) good.push(await trade(A(), C(), 'SELL', '2001', '0.01'));
  const badTrade = await trade({ org: org3, id: bad.id }, D(), 'SELL', '2002', '0.5');
  for (let i = 0; i < 3; i++) good.push(await trade(B(), D(), 'BUY', '1999', '0.01'));
  await resume();
  await quiet();

  expect((await db('trades').where({ id: badTrade }).first()).settlementStatus).toBe('FAILED');
  for (const id of good) expect((await db('trades').where({ id }).first()).settlementStatus).toBe('CONFIRMED');
  const first = await db('settlement_batches').whereRaw('? = ANY(trade_ids)', [badTrade]).whereNull('parentBatchId').first();
  expect(first).toMatchObject({ status: 'FAILED', tradeCount: 7 });
  expect(first.failureReason).toMatch(/^InsufficientBalance\(/);
  const last = await batchOf(badTrade);
  expect(last).toMatchObject({ status: 'FAILED', tradeCount: 1 });
  expect(last.parentBatchId).not.toBeNull();
  const failed = await org3.pro.request('GET', '/v1/orderbook/settlement-batches?status=FAILED');
  expect(failed.body.data.map((b: { id: string }) => b.id)).toContain(first.id);
  // The hollow wallet is the only difference between the chain and the ledger.
  const report = await reconcile();
  expect(report.differences.map((x) => x.walletId)).toEqual([bad.id]);
}, 120_000);

test('a stuck settlement transaction is replaced by a fee bump', async () => {
  await pause();
  const id = await trade(A(), C(), 'SELL', '2003', '0.01');
  // Funded ahead, so the batch needs nothing mined before its own transaction.
  const d = await deployment();
  const accounts = await walletAccounts(db, [wallets[0].id, wallets[2].id]);
  await t.keel.services.settlementFunding.fund(d, [
    { account: accounts.get(wallets[0].id)!, assetId: assets.ETH.id, token: ethers.ZeroAddress, amount: ethers.parseEther('0.05') },
    { account: accounts.get(wallets[2].id)!, assetId: assets.USDC.id, token: ethers.getAddress(assets.USDC.address), amount: ethers.parseUnits('100', 6) },
  ]);
  await setAutomine(rpcUrl, false);
  try {
    await resume();
    const sent = await eventually(async () => {
      const b = await batchOf(id);
      return b?.status === 'SUBMITTED' ? b : undefined;
    }, 30_000);
    // The market moves far above the fee it was signed with: the next block leaves it out.
    await rpc(rpcUrl, 'hardhat_setNextBlockBaseFeePerGas', [ethers.toQuantity(ethers.parseUnits('500', 'gwei'))]);
    await mine(rpcUrl, 1);
    const bumped = await eventually(async () => {
      const b = await batchOf(id);
      return b.txHash !== sent.txHash ? b : undefined;
    }, 30_000);
    expect(bumped.replacedTxHashes).toEqual([sent.txHash]);
    expect(BigInt(bumped.maxFeePerGas)).toBeGreaterThan(BigInt(sent.maxFeePerGas));
    // Recorded first, then broadcast: the next block includes it once the node holds it.
    await eventually(() => provider.getTransaction(bumped.txHash), 10_000);
    await mine(rpcUrl, 1);
  } finally {
    await setAutomine(rpcUrl, true);
  }
  await quiet();
  const done = await batchOf(id);
  expect(done.status).toBe('CONFIRMED');
  expect(await provider.getTransactionReceipt(done.replacedTxHashes[0])).toBeNull();
  expect(await transitionsOf(done.id)).toEqual(['->BATCHED', 'BATCHED>SUBMITTED', 'SUBMITTED>REPLACED', 'REPLACED>SUBMITTED', 'SUBMITTED>CONFIRMED']);
  await mine(rpcUrl, 40); // the base fee falls back
}, 120_000);

test('a confirmed batch whose block leaves the chain is REORGED and settled again, once', async () => {
  await quiet();
  const before = await snapshot(rpcUrl);
  const id = await trade(B(), D(), 'SELL', '2004', '0.02');
  await quiet();
  const confirmed = await batchOf(id);
  expect(confirmed.status).toBe('CONFIRMED');

  await revert(rpcUrl, before);
  const again = await eventually(async () => {
    const b = await batchOf(id);
    return b.status === 'CONFIRMED' && (await transitionsOf(b.id)).length > 3 ? b : undefined;
  }, 60_000, 200);
  expect(await transitionsOf(again.id)).toEqual(['->BATCHED', 'BATCHED>SUBMITTED', 'SUBMITTED>CONFIRMED', 'CONFIRMED>REORGED', 'REORGED>SUBMITTED', 'SUBMITTED>CONFIRMED']);
  // Its nonce was free again, so the same signed transaction was sent again: had the old one still
  // been in a node's pool, only one of the two could ever be mined.
  expect(again).toMatchObject({ txHash: confirmed.txHash, nonce: confirmed.nonce, replacedTxHashes: confirmed.replacedTxHashes });
  await quiet();
  const contract = new ethers.Contract((await deployment()).address, settlementInterface(), provider);
  expect(await contract.isSettled((await db('trades').where({ id }).first()).settlementKey)).toBe(true);
  // Its funding transactions, gone with the rewound blocks and their nonces free again, were sent again: each is charged for the block it is in now, not dropped.
  const funded = await db('settlement_funding_txs').where({ batchId: again.id });
  expect(funded.length).toBeGreaterThan(0);
  for (const f of funded) {
    expect(f).toMatchObject({ status: 'MINED', gasRefunded: false });
    expect((await provider.getTransactionReceipt(f.txHash))?.blockHash).toBe(f.blockHash);
  }
  // Settled once: the wallets' on-chain balances match the ledger (a second settlement would not).
  await eventually(async () => (await reconcile(org2.orgId)).differences.length === 0 && (await reconcile(org1.orgId)).differences.length === 0, 30_000);
}, 120_000);

test('keel reconcile is clean after all this, reports a planted difference and exits non-zero; the worker exports the count', async () => {
  for (const org of [org1, org2]) expect(await keelCommand(t.config, ['reconcile', '--organization', org.orgId])).toMatchObject({ clean: true });
  await db.transaction((trx) => t.keel.services.ledger.credit(trx, { organizationId: org1.orgId, walletId: wallets[0].id, assetId: assets.USDC.id, amount: 1_500_000n, reference: 'test:planted' }));
  const failed = await keelCommand(t.config, ['reconcile', '--organization', org1.orgId]).then(
    () => null,
    (e: { code?: number; stdout?: string; stderr?: string }) => e,
  );
  expect(failed?.code).toBe(1);
  const out = JSON.parse(failed!.stdout!.trim().split('\n').pop()!);
  expect(out.clean).toBe(false);
  expect(out.chains[0].differences).toEqual([expect.objectContaining({ walletId: wallets[0].id, symbol: 'USDC', difference: '-1500000' })]);
  expect(failed!.stderr).toMatch(/DIFFERENCE .* USDC/);
  // The worker's periodic check counts every difference on the chain (the hollow wallet's too).
  const all = (await reconcile()).differences.length;
  expect(all).toBeGreaterThanOrEqual(1);
  const gauge = new RegExp(`keel_settlement_reconcile_differences\\{chain="dev-${CHAIN_ID}"\\} ${all}(\n|$)`);
  await eventually(async () => gauge.test(await t.keel.platform.metrics.registry.getSingleMetricAsString('keel_settlement_reconcile_differences')), 10_000);
}, 90_000);

test('keel settlement deploy deploys a contract on a chain and records it as the chain\'s settlement contract', async () => {
  const before = await db('settlement_contracts').where({ blockchainId }).first();
  const out = await keelCommand<{ address: string; operator: string; feeRecipient: string }>(t.config, ['settlement', 'deploy', '--chain', String(CHAIN_ID), '--exit-delay', '60']);
  expect(out.address).not.toBe(before.address);
  expect(await provider.getCode(out.address)).not.toBe('0x');
  const deployed = new ethers.Contract(out.address, settlementInterface(), provider);
  expect(await deployed.exitDelay()).toBe(60n);
  expect(await deployed.operator()).toBe((await deployment()).operator.address);
  expect((await db('settlement_contracts').where({ blockchainId }).first()).address).toBe(out.address);
}, 60_000);
