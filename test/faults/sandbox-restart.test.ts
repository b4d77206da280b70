/**
 * Fault: a sandbox `keel start` with its own dev chains is stopped (SIGTERM, then SIGKILL) and
 * started again on the same database and data dir; then its chains' data is deleted (a reset).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ApiClient } from '../support/api-client';
import { createTestDatabase, dropTestDatabase, runPrefix } from '../support/databases';
import { eventually } from '../support/eventually';
import { testKeelConfig } from '../support/keel';
import { keelCommand } from '../support/keel-cli';
import { KeelProcess, startKeelProcess, stopKeelProcess } from '../support/keel-process';
import { marketBody } from '../integration/orderbook/support';
import { depositToTrading } from '../support/settlement-trading';
import type { TestOrg } from '../support/keel';
import { Client } from 'pg';

jest.setTimeout(180_000);

const name = `${runPrefix()}_sbx_${randomBytes(4).toString('hex')}`;
const dataDir = mkdtempSync(join(tmpdir(), 'keel-sandbox-restart-'));
let config: ReturnType<typeof testKeelConfig>;
let keel: KeelProcess;
let org: { orgId: string; adminKey: string; proKey: string };
/** Markets are the operator's to create. */
let operator: { orgId: string; key: string };
const ids = { chain: '', ETH: '', USDC: '', wallet: '', address: '' };

/** The sandbox as `npm start` runs it: its own dev chain (one, to keep it quick), blocks every 500 ms, settlement on. */
const start = () =>
  startKeelProcess(config, 'api,orderbook,worker', {
    KEEL_CHAINS: '',
    KEEL_DATA_DIR: dataDir,
    DEV_CHAIN_PORT: '0',
    DEV_CHAIN_IDS: '31337',
    DEV_CHAIN_BLOCK_INTERVAL_MS: '500',
    CHAIN_POLL_INTERVAL_MS: '200',
    RATE_LIMIT_SCALE: '100',
    // Orders trade balances in the settlement contract: the worker deploys it on the dev chain.
    SETTLEMENT_ENABLED: 'true',
  });
const core = () => new ApiClient(keel.coreUrl!, { apiKey: org.adminKey, orgId: org.orgId });
const pro = () => new ApiClient(keel.proUrl!, { apiKey: org.proKey, orgId: org.orgId });
const operatorClient = () => new ApiClient(keel.proUrl!, { apiKey: operator.key, orgId: operator.orgId });

/** Log lines (JSON) whose message starts with `prefix`. */
const logged = (prefix: string) =>
  keel
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string; blockchainId?: string })
    .filter((l) => l.msg.startsWith(prefix));

/** Retries `check` until it stops throwing (the last failure is reported on time-out). */
async function eventuallyPasses(check: () => Promise<void>, timeoutMs = 30_000): Promise<void> {
  let failure: unknown;
  const passed = await eventually(() => check().then(() => true, (e) => ((failure = e), false)), timeoutMs, 200).catch(() => false);
  if (!passed) throw failure;
}

async function fund(address: string, asset: string, amount: string): Promise<void> {
  const res = await core().post('/v1/dev/faucet', { blockchainId: ids.chain, address, asset, amount });
  if (res.status !== 200 && res.status !== 201) throw new Error(`faucet: ${res.status} ${JSON.stringify(res.body)}`);
}

/** A wallet's custody account (at its address) per symbol in the ledger: [symbol, available, locked], read from PostgreSQL. */
async function custody(walletId: string): Promise<[string, string, string][]> {
  const client = new Client({ connectionString: config.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT a.symbol, b.available::text, b.locked::text FROM ledger_balances b JOIN assets a ON a.id = b.asset_id WHERE b.wallet_id = $1 AND b.account = 'custody' ORDER BY a.symbol`,
      [walletId],
    );
    return rows.map((r: { symbol: string; available: string; locked: string }) => [r.symbol, r.available, r.locked]);
  } finally {
    await client.end();
  }
}

/** Whether the chain's settlement contract is recorded (the worker deploys it on the dev chain at start). */
async function settlementContractRecorded(): Promise<boolean> {
  const client = new Client({ connectionString: config.DATABASE_URL });
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM settlement_contracts WHERE blockchain_id = $1', [ids.chain])).rowCount === 1;
  } finally {
    await client.end();
  }
}

/** Everything a restart must keep: trading and custody balances, on-chain balances, open orders, deposits. */
async function state() {
  const [balances, addressBalances, walletCustody, addressCustody, onChain, orders, deposits] = await Promise.all([
    pro().get(`/v1/orderbook/wallets/${ids.wallet}/balances`),
    pro().get(`/v1/orderbook/wallets/${ids.address}/balances`),
    custody(ids.wallet),
    custody(ids.address),
    core().get(`/v1/master-wallets/${ids.wallet}/balances`),
    pro().get('/v1/orderbook/orders?status=OPEN'),
    core().get(`/v1/master-wallets/${ids.wallet}/transactions?direction=incoming&sort=ASC`),
  ]);
  return {
    balances: balances.body.data,
    addressBalances: addressBalances.body.data,
    walletCustody,
    addressCustody,
    onChain: onChain.body.data.map((b: { asset: { symbol: string }; rawBalance: string }) => [b.asset.symbol, b.rawBalance]),
    orders: orders.body.data,
    deposits: deposits.body.transfer.map((d: Record<string, unknown>) => [d.hash, d.logIndex, d.blockNum, d.status, d.symbol, d.value]),
  };
}

beforeAll(async () => {
  config = testKeelConfig(name, await createTestDatabase(name));
  // The test database is a copy of the migrated template, so `keel org create` and `keel operator key create` need not wait for Keel.
  [keel, org, operator] = await Promise.all([
    start(),
    keelCommand<typeof org>(config, ['org', 'create', '--name', 'Sandbox', '--tier', 'Business', '--json']),
    keelCommand<typeof operator>(config, ['operator', 'key', 'create', '--json']),
  ]);
  ids.chain = (await core().get('/v1/blockchains')).body.data[0].id;
  for (const a of (await core().get(`/v1/assets?blockchainId=${ids.chain}`)).body.data) if (a.symbol in ids) ids[a.symbol as 'ETH' | 'USDC'] = a.id;
  expect((await operatorClient().post('/v1/orderbook/markets', marketBody('ETH-USDC', { id: ids.ETH }, { id: ids.USDC }))).status).toBe(201);
});

afterAll(async () => {
  if (keel) await stopKeelProcess(keel.child, 'SIGKILL');
  await dropTestDatabase(name).catch(() => undefined);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a sandbox restart', () => {
  let before: Awaited<ReturnType<typeof state>>;

  test('funded wallets with open orders', async () => {
    const wallet = await core().post('/v1/master-wallets', { blockchainId: ids.chain, name: 'Treasury' });
    ids.wallet = wallet.body.data.id;
    const address = await core().post(`/v1/master-wallets/${ids.wallet}/addresses`, { name: 'Customer' });
    ids.address = address.body.data.id;
    await fund(wallet.body.data.walletAddress, 'ETH', '5');
    await fund(wallet.body.data.walletAddress, 'USDC', '3000');
    await fund(address.body.data.address, 'USDC', '40');
    await eventuallyPasses(async () => expect((await custody(ids.address))[0]?.slice(0, 2)).toEqual(['USDC', '40000000']));
    // Orders trade what the wallet moved into the settlement contract: 4 ETH and all its USDC.
    await eventuallyPasses(async () => expect(await settlementContractRecorded()).toBe(true));
    const asPro = { pro: pro() } as unknown as TestOrg;
    await depositToTrading(asPro, ids.wallet, ids.ETH, '4');
    await depositToTrading(asPro, ids.wallet, ids.USDC, '3000');
    const balances = (await pro().get(`/v1/orderbook/wallets/${ids.wallet}/balances`)).body.data;
    expect(balances.map((b: { symbol: string; available: string }) => [b.symbol, b.available]).sort()).toEqual([['ETH', '4'], ['USDC', '3000']]);
    const order = (body: Record<string, string>) => pro().post('/v1/orderbook/orders', { walletId: ids.wallet, market: 'ETH-USDC', type: 'LIMIT', timeInForce: 'GTC', ...body });
    expect((await order({ side: 'BUY', price: '2000', quantity: '0.5' })).status).toBe(201);
    expect((await order({ side: 'SELL', price: '3000', quantity: '2' })).status).toBe(201);
    before = await state();
    expect(before.orders).toHaveLength(2);
    expect(JSON.stringify(before.balances)).toContain('"locked":"2"');
  });

  test.each(['SIGTERM', 'SIGKILL'] as const)('after %s keeps chain, balances, orders and deposits, with no reorg', async (signal) => {
    await stopKeelProcess(keel.child, signal);
    keel = await start();
    expect(logged('dev chain restored from its journal')).toHaveLength(1);
    expect(await state()).toEqual(before);
    // The watcher goes on from its cursor: a new deposit is credited, and nothing before it was taken for a reorg.
    await fund((await core().get(`/v1/addresses/${ids.address}`)).body.data.address, 'USDC', '1');
    await eventuallyPasses(async () => expect((await custody(ids.address))[0][1]).toBe(signal === 'SIGTERM' ? '41000000' : '42000000'));
    expect(logged('chain reorganised')).toEqual([]);
    expect(logged('reorg deeper')).toEqual([]);
    expect(logged('chain reset')).toEqual([]);
    before = await state();
  });

  test('after its chain data is deleted, says "chain reset" once, and leaves no order locking money that is gone', async () => {
    await stopKeelProcess(keel.child, 'SIGTERM');
    for (const entry of readdirSync(dataDir)) rmSync(join(dataDir, entry), { recursive: true, force: true });
    keel = await start();
    const resets = logged('chain reset');
    expect(resets).toHaveLength(1);
    expect(resets[0]).toMatchObject({ reason: 'genesis-changed', revertedDeposits: 5, cancelledOrders: 2, linesSignedAgain: 0, unbacked: {} });
    const after = await state();
    expect(after.orders).toEqual([]);
    // The contract went with the chain: trading balances went back to custody and were taken back with the deposits.
    for (const b of [...after.balances, ...after.addressBalances]) expect(b).toMatchObject({ available: '0', locked: '0' });
    for (const [, available, locked] of [...after.walletCustody, ...after.addressCustody]) expect([available, locked]).toEqual(['0', '0']);
    // The new chain is followed from its head: a deposit on it is credited as usual.
    await fund((await core().get(`/v1/master-wallets/${ids.wallet}`)).body.data.walletAddress, 'USDC', '7');
    await eventuallyPasses(async () => expect((await custody(ids.wallet)).find(([symbol]) => symbol === 'USDC')).toEqual(['USDC', '7000000', '0']));
    // The wallet sent four transactions on the old chain (its trading deposits); on the new one its
    // nonces start again from the chain's, so its next transfer is mined rather than waiting behind a gap.
    await fund((await core().get(`/v1/master-wallets/${ids.wallet}`)).body.data.walletAddress, 'ETH', '1');
    // Credited less the gas the old chain's last transactions left owing (wallet_debts).
    await eventuallyPasses(async () => expect(BigInt((await custody(ids.wallet)).find(([symbol]) => symbol === 'ETH')?.[1] ?? 0)).toBeGreaterThan(10n ** 17n));
    const sent = await core().post(`/v1/master-wallets/${ids.wallet}/transfer`, { assets: [{ assetId: ids.USDC, recipient: '0x000000000000000000000000000000000000dEaD', amount: '2' }] });
    expect(sent.status).toBe(201);
    await eventuallyPasses(async () => expect((await core().get(`/v1/transfers/${sent.body.data.id}`)).body.data.status).toBe('CONFIRMED'));
    // On the EVM chain: the sandbox Solana network, its data deleted too, starts from genesis and its watcher walks back over it (one deposit watcher serves both families).
    const onEvm = (prefix: string) => logged(prefix).filter((l) => l.blockchainId === ids.chain);
    expect(onEvm('chain reorganised')).toEqual([]);
    expect(onEvm('reorg deeper')).toEqual([]);
  });
});
