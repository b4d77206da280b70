import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { ApiClient } from '../support/api-client';
import { startKeelProcess, stopKeelProcess } from '../support/keel-process';
import { BookKeel, BookOrg, units } from '../integration/orderbook/support';
import type { CreateMarketInput } from '../../src/modules/markets/market.types';

/**
 * A single order-book node killed with SIGKILL and started again on the same host and data folder,
 * with no KEEL_NODE_ID: it comes back under the id kept in its data folder and takes its own shard
 * leases back at once, though the dead process's leases still had most of a long time-to-live left.
 * A second live process on that folder runs under another id and takes nothing from the first.
 */
const SYMBOL = 'ETH-USDC';
// A lease long enough that waiting it out could not pass for taking it back.
const NODE_ENV = { RATE_LIMIT_SCALE: '1000', ORDERBOOK_LEASE_TTL_MS: '30000' };

let k: BookKeel;
let org: BookOrg;
let walletId: string;
const dataDir = mkdtempSync(join(tmpdir(), 'keel-node-restart-'));
const children: ChildProcess[] = [];

async function startNode(): Promise<{ child: ChildProcess; client: ApiClient }> {
  const started = await startKeelProcess(k.config, 'orderbook', { ...NODE_ENV, KEEL_DATA_DIR: dataDir });
  children.push(started.child);
  return { child: started.child, client: new ApiClient(started.proUrl!, { apiKey: org.proKey!, orgId: org.orgId }) };
}

const order = (clientOrderId: string) => ({ walletId, market: SYMBOL, side: 'BUY', type: 'LIMIT', price: '1000.00', quantity: '0.010', timeInForce: 'GTC', clientOrderId });

beforeAll(async () => {
  k = await BookKeel.start({ KEEL_ROLES: 'api' });
  const { ETH, USDC } = await k.assets();
  await k.services.markets.create({ symbol: SYMBOL, baseAssetId: ETH.id, quoteAssetId: USDC.id, tickSize: '0.01', lotSize: '0.001', minNotional: '0', makerFee: '0', takerFee: '0' } as CreateMarketInput);
  org = await k.createOrg();
  walletId = await k.wallet(org);
  await k.credit(org, walletId, USDC.id, units('100000', USDC.decimals));
}, 60_000);

afterAll(async () => {
  for (const child of children) await stopKeelProcess(child, 'SIGKILL');
  await k?.stop();
});

test('a node restarted after kill -9 takes its own shards back under its kept id and answers its first order', async () => {
  const first = await startNode();
  const before = (await first.client.get('/v1/orderbook/engine/status')).body.data;
  expect((await first.client.post('/v1/orderbook/orders', order('before-kill'))).status).toBe(201);
  const keptId = readFileSync(join(dataDir, 'node-id'), 'utf8').trim();
  expect(before.nodeId).toBe(keptId);

  await stopKeelProcess(first.child, 'SIGKILL');
  const restarted = await startNode();
  const ready = Date.now();
  // Ready means leading: the first order after the restart is taken, not answered NOT_LEADER, within 1 s of being ready.
  const placed = await restarted.client.post('/v1/orderbook/orders', order('after-restart'));
  expect(placed.status).toBe(201);
  expect(Date.now() - ready).toBeLessThan(1_000);
  const after = (await restarted.client.get('/v1/orderbook/engine/status')).body.data;
  expect(after.nodeId).toBe(keptId);
  const shard = after.cluster.find((c: { leader: string | null }) => c.leader === keptId);
  expect(shard).toBeDefined();
  expect(BigInt(after.shards[0].fencingToken)).toBeGreaterThan(BigInt(before.shards[0].fencingToken));
}, 60_000);

test('a second live process on the same data folder runs under another id and takes no shard from the first', async () => {
  const keptId = readFileSync(join(dataDir, 'node-id'), 'utf8').trim();
  const second = await startNode();
  const status = (await second.client.get('/v1/orderbook/engine/status')).body.data;
  expect(status.nodeId).not.toBe(keptId);
  expect(status.shards).toEqual([]);
  const refused = await second.client.post('/v1/orderbook/orders', order('on-the-second'));
  expect(refused.status).toBe(409);
  expect(refused.body.error).toMatchObject({ code: 'NOT_LEADER', details: { leader: keptId } });
}, 60_000);
