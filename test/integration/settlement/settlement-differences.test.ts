import { randomUUID } from 'node:crypto';
import { createDb, Db } from '../../../src/platform/db/knex';
import { Outbox } from '../../../src/platform/events/outbox';
import { Metrics } from '../../../src/platform/metrics';
import { createLogger } from '../../../src/platform/logger';
import type { ChainNetwork, ChainNetworks } from '../../../src/modules/chains';
import { SettlementWorker } from '../../../src/modules/settlement/settlement-worker';
import { SettlementReconciler } from '../../../src/modules/settlement/settlement-reconciler';
import type { SettlementDeployments } from '../../../src/modules/settlement/settlement-deployments';
import type { SettlementBatcher } from '../../../src/modules/settlement/batcher';
import type { TradingDepositReorgs } from '../../../src/modules/settlement/trading-deposit-reorgs';
import type { TradingExits } from '../../../src/modules/settlement/trading-exits';
import type { ReconcileLine, ReconcileReport } from '../../../src/modules/settlement/reconciliation';
import { createTestDatabase, dropTestDatabase, runPrefix } from '../../support/databases';

/**
 * The worker's reconciliation tells a wallet's organisation of a lasting difference once
 * (`trading_balance.difference`), however many workers run it and however often they restart: what
 * was found and told is kept in PostgreSQL. The chain is scripted here (the differences each run
 * reads); the settlement integration tests reconcile a real one.
 */
const NAME = `${runPrefix()}_settlement_differences`;
/** The reconcile interval: long enough that a loaded machine's stall between two runs stays well below it. */
const INTERVAL_MS = 1_500;
let db: Db;
let blockchainId: string;
let organizationId: string;
const walletId = randomUUID();
const assetId = randomUUID();
/** What the chain differs by, as every worker's next run reads it. */
let onChain: ReconcileLine[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const line = (difference: string): ReconcileLine => ({
  blockchainId, organizationId, walletId, address: '0x00000000000000000000000000000000000000aa', assetId, symbol: 'USDC', account: 'trading',
  ledger: '5000000', unsettled: '0', inFlight: '0', debt: '0', expected: '5000000', onChain: String(5_000_000n + BigInt(difference)), difference,
});

/** The chain's reconciliation, read from `onChain` instead of a node. */
class ScriptedReconciler extends SettlementReconciler {
  override async reconcile(): Promise<ReconcileReport> {
    return { blockchainId, contract: null, blockNumber: 1, checked: 1, differences: onChain };
  }
}

/** A worker node (a new one is a restarted node: it remembers nothing), reconciling the one chain every INTERVAL_MS. */
function node(): { worker: SettlementWorker; gauge: () => Promise<number | undefined> } {
  const network = { blockchainId, spec: { slug: 'differences-chain' } } as unknown as ChainNetwork;
  const networks = { all: () => [network] } as unknown as ChainNetworks;
  const deployments = { ensureOnDevChain: async () => undefined, get: async () => null } as unknown as SettlementDeployments;
  const reconciler = new ScriptedReconciler(db, deployments, new Outbox('test'));
  const depositReorgs = { check: async () => 0 } as unknown as TradingDepositReorgs;
  const metrics = new Metrics();
  const worker = new SettlementWorker(db, networks, deployments, {} as SettlementBatcher, reconciler, depositReorgs, {} as TradingExits, metrics, { pollIntervalMs: 100, leaseMs: 2_000, reconcileIntervalMs: INTERVAL_MS }, createLogger('silent'));
  return { worker, gauge: async () => (await metrics.settlementDifferences.get()).values[0]?.value };
}

/** The differences told, oldest first. */
const told = async () => (await db('outbox_events').where({ type: 'trading_balance.difference' }).orderBy('sequence')).map((e: { organizationId: string; envelope: { data: ReconcileLine } }) => ({ to: e.organizationId, ...e.envelope.data }));

beforeAll(async () => {
  db = createDb(await createTestDatabase(NAME), 4);
  [{ id: blockchainId }] = await db('blockchains')
    .insert({ chainId: 990_002, name: 'Differences chain', slug: 'differences-chain', symbol: 'ETH', network: 'testnet', tokenStandard: 'ERC20', rpcUrl: 'http://127.0.0.1:1', confirmations: 1 })
    .returning('id');
  [{ id: organizationId }] = await db('organizations').insert({ name: 'Differences', tier: 'Pro' }).returning('id');
});

afterAll(async () => {
  await db.destroy();
  await dropTestDatabase(NAME);
});

beforeEach(async () => {
  onChain = [];
  await db('outbox_events').delete();
  await db('settlement_differences').delete();
});

test('a lasting difference is told once, whichever of two worker nodes finds it lasting first, and not again after a restart', async () => {
  onChain = [line('-1500000')];
  const a = node();
  const b = node();
  // Both nodes find it, one right after the other: two runs, but not a run interval apart.
  await a.worker.reconcile();
  await b.worker.reconcile();
  expect(await told()).toEqual([]);
  expect(await a.gauge()).toBe(0);
  expect(await b.gauge()).toBe(0);

  await sleep(INTERVAL_MS);
  // Node a restarts (remembering nothing): what the nodes found a run interval ago makes it lasting.
  const restarted = node();
  await restarted.worker.reconcile();
  await b.worker.reconcile();
  await sleep(INTERVAL_MS);
  await b.worker.reconcile();
  await restarted.worker.reconcile();
  await node().worker.reconcile(); // restarted again
  expect(await told()).toEqual([expect.objectContaining({ to: organizationId, walletId, assetId, account: 'trading', symbol: 'USDC', difference: '-1500000' })]);
  // Every node counts it, each run.
  expect(await restarted.gauge()).toBe(1);
  expect(await b.gauge()).toBe(1);
});

test('a difference is told again when its amount changes, or after it went away and came back; one found by a single run is not told', async () => {
  const a = node();
  const b = node();
  onChain = [line('-100')];
  await a.worker.reconcile();
  await sleep(INTERVAL_MS);
  await b.worker.reconcile(); // the other node's run in a row
  expect((await told()).map((d) => d.difference)).toEqual(['-100']);

  // Another amount: told once it lasts too.
  onChain = [line('-250')];
  await a.worker.reconcile();
  await b.worker.reconcile();
  expect((await told()).map((d) => d.difference)).toEqual(['-100']);
  await sleep(INTERVAL_MS);
  await b.worker.reconcile();
  await a.worker.reconcile();
  expect((await told()).map((d) => d.difference)).toEqual(['-100', '-250']);

  // Gone, then back with the amount already told: it is news again.
  onChain = [];
  await a.worker.reconcile();
  expect(await a.gauge()).toBe(0);
  onChain = [line('-250')];
  await b.worker.reconcile();
  await sleep(INTERVAL_MS);
  await a.worker.reconcile();
  expect((await told()).map((d) => d.difference)).toEqual(['-100', '-250', '-250']);

  // Money in flight: found by one run, gone by the next.
  onChain = [line('7')];
  await a.worker.reconcile();
  await sleep(INTERVAL_MS);
  onChain = [];
  await b.worker.reconcile();
  await a.worker.reconcile();
  expect((await told()).map((d) => d.difference)).toEqual(['-100', '-250', '-250']);
  expect(await db('settlement_differences')).toEqual([]);
});
