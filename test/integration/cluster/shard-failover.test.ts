import { ApiClient, ApiResponse } from '../../support/api-client';
import { eventually } from '../../support/eventually';
import { BookKeel, BookOrg, expectMarketRecord, units } from '../orderbook/support';
import type { CreateMarketInput } from '../../../src/modules/markets/market.types';
import { ClusterNode, engineStatus, isAlive, isStopped, leaderOf, settledCluster, SHARD, startNode, stopNodes, tryRequest } from './support';

/**
 * Three order-book nodes (child processes `keel start --roles orderbook`) on one PostgreSQL and one
 * Redis, with 1.5 s shard leases. Node F starts first and takes every shard; A and B stand by.
 * - F, stalled (SIGSTOP) just before a commit, is replaced within about a lease; resumed, its
 *   commit is refused by the fencing token in PostgreSQL and its caller is answered NOT_LEADER;
 * - a node that does not lead a market's shard answers 409 NOT_LEADER with Retry-After and the
 *   leader's node id (REST and GraphQL), for placements and cancels;
 * - every node's engine status shows the same cluster view;
 * - kill -9 of a leader under continuous order flow from clients that retry 409 NOT_LEADER on
 *   another node: a new leader takes over, every order answered 2xx is in the record once, the
 *   market's sequence is gapless and the ledger balances.
 */
let k: BookKeel;
const nodes: ClusterNode[] = [];
const traders: { org: BookOrg; walletId: string }[] = [];
const marketIds: Record<string, string> = {};

const byId = (nodeId: string | null) => nodes.find((n) => n.nodeId === nodeId);
const clientOn = (node: ClusterNode, org: BookOrg = traders[0].org) => new ApiClient(node.url, { apiKey: org.proKey!, orgId: org.orgId });
const order = (t: { walletId: string }, market: string, side: 'BUY' | 'SELL', price: string, quantity: string, clientOrderId: string) => ({
  walletId: t.walletId,
  market,
  side,
  type: 'LIMIT',
  price,
  quantity,
  timeInForce: 'GTC',
  clientOrderId,
});

beforeAll(async () => {
  // In process: the core host (wallets) and the services the checks read through; the order book runs only in the children.
  k = await BookKeel.start({ KEEL_ROLES: 'api' });
  const { ETH, USDC, DAI } = await k.assets();
  for (const [symbol, quote] of [
    ['ETH-USDC', USDC],
    ['ETH-DAI', DAI],
  ] as const) {
    const market = await k.services.markets.create({ symbol, baseAssetId: ETH.id, quoteAssetId: quote.id, tickSize: '0.01', lotSize: '0.001', minNotional: '0', makerFee: '0.001', takerFee: '0.002' } as CreateMarketInput);
    marketIds[symbol] = market.id;
  }
  for (const org of [await k.createOrg(), await k.createOrg()]) {
    const walletId = await k.wallet(org);
    await k.credit(org, walletId, ETH.id, units('1000', ETH.decimals));
    await k.credit(org, walletId, USDC.id, units('10000000', USDC.decimals));
    await k.credit(org, walletId, DAI.id, units('10000000', DAI.decimals));
    traders.push({ org, walletId });
  }
  // F first, alone: it takes every shard. It stops itself (SIGSTOP) before its first order commit.
  nodes.push(await startNode(k.config, 'node-f', { KEEL_FAILPOINTS: 'stop-before-commit:order.commit' }));
  nodes.push(...(await Promise.all([startNode(k.config, 'node-a'), startNode(k.config, 'node-b')])));
}, 90_000);

afterAll(async () => {
  await stopNodes(nodes);
  await k?.stop();
});

describe('a stalled leader resumed after its lease expired', () => {
  it('cannot commit: its commit is refused by the fencing token in PostgreSQL, nothing is written, its caller gets NOT_LEADER', async () => {
    const [f] = nodes;
    const t = traders[0];
    expect(await leaderOf(clientOn(f), SHARD['ETH-DAI'])).toBe('node-f');
    const tokenBefore = (await engineStatus(clientOn(f))).shards.find((s) => s.shard === SHARD['ETH-DAI'])!.fencingToken;

    // F takes the order, matches it, and stops right before sending its commit.
    const stalled = clientOn(f).post('/v1/orderbook/orders', order(t, 'ETH-DAI', 'SELL', '2000', '1', 'stalled-on-f'));
    await eventually(() => isStopped(f), 10_000);

    // Another node takes the shard once the lease expires, with a greater token (and has rebuilt its books).
    const other = nodes[1];
    const newLeader = await eventually(async () => {
      const leader = await leaderOf(clientOn(other), SHARD['ETH-DAI']);
      return leader && leader !== 'node-f' ? leader : undefined;
    }, 10_000);
    const successor = byId(newLeader)!;
    const held = await eventually(async () => (await engineStatus(clientOn(successor))).shards.find((s) => s.shard === SHARD['ETH-DAI'] && s.state === 'LEADING'), 10_000);
    expect(BigInt(held.fencingToken)).toBeGreaterThan(BigInt(tokenBefore));

    // F resumes and sends the commit it had prepared under its old token. Nothing else has been
    // written to the market, so its sequence check would pass: only the shard's token refuses it.
    f.proc.child.kill('SIGCONT');
    const answer = await stalled;
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe('NOT_LEADER');
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await eventually(() => f.proc.output().includes('a commit was refused by the shard fencing token'), 5_000);
    expect(await k.db('orders').where({ clientOrderId: 'stalled-on-f' })).toHaveLength(0);

    // The new leader goes on from the record.
    const taken = await clientOn(successor).post('/v1/orderbook/orders', order(t, 'ETH-DAI', 'BUY', '1900', '1', 'after-takeover'));
    expect(taken.status).toBe(201);
    await expectMarketRecord(k, marketIds['ETH-DAI'], [{ id: taken.body.data.id, clientOrderId: 'after-takeover', orgId: t.org.orgId }]);
    // F leads none of the shards it lost, and knows who does.
    const fStatus = await engineStatus(clientOn(f));
    expect(fStatus.shards.map((s) => s.shard)).not.toContain(SHARD['ETH-DAI']);
    expect(fStatus.cluster.find((c) => c.shard === SHARD['ETH-DAI'])!.leader).toBe(newLeader);
  }, 60_000);
});

describe('a node that does not lead the market', () => {
  it('answers 409 NOT_LEADER with Retry-After and the leader in details, for a placement and a cancel, in REST and GraphQL', async () => {
    const t = traders[0];
    await settledCluster(nodes.map((n) => clientOn(n)));
    const leader = byId(await leaderOf(clientOn(nodes[0]), SHARD['ETH-DAI']))!;
    const follower = nodes.find((n) => n !== leader)!;
    const before = await k.db('orders').where({ marketId: marketIds['ETH-DAI'] }).count({ n: '*' }).first();

    const refused = await clientOn(follower).post('/v1/orderbook/orders', order(t, 'ETH-DAI', 'SELL', '2100', '1', 'to-a-follower'));
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'NOT_LEADER', details: { leader: leader.nodeId, shard: SHARD['ETH-DAI'], market: 'ETH-DAI' } });
    expect(refused.body.error.requestId).toEqual(expect.any(String));
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const gql = await clientOn(follower).graphql('mutation($input: PlaceOrderInput!) { placeOrder(input: $input) { id } }', { input: order(t, 'ETH-DAI', 'SELL', '2100', '1', 'to-a-follower') });
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'NOT_LEADER', details: { leader: leader.nodeId } });
    expect(Number(gql.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await k.db('orders').where({ marketId: marketIds['ETH-DAI'] }).count({ n: '*' }).first()).toEqual(before);

    // The refusal is not stored under the request's Idempotency-Key: the same request at the leader runs.
    const key = { 'Idempotency-Key': 'not-leader-then-leader' };
    const body = order(t, 'ETH-DAI', 'SELL', '2100', '1', 'retried-at-the-leader');
    expect((await clientOn(follower).post('/v1/orderbook/orders', body, key)).body.error.code).toBe('NOT_LEADER');
    const atLeader = await clientOn(leader).post('/v1/orderbook/orders', body, key);
    expect(atLeader.status).toBe(201);
    expect(atLeader.headers.get('idempotent-replayed')).toBeNull();
    const replayed = await clientOn(leader).post('/v1/orderbook/orders', body, key);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.data.id).toBe(atLeader.body.data.id);

    // A cancel too: only the leader cancels.
    const resting = await k.db('orders').where({ clientOrderId: 'after-takeover' }).first();
    const cancelElsewhere = await clientOn(follower).delete(`/v1/orderbook/orders/${resting.id}`);
    expect(cancelElsewhere.status).toBe(409);
    expect(cancelElsewhere.body.error.code).toBe('NOT_LEADER');
    expect((await clientOn(leader).delete(`/v1/orderbook/orders/${resting.id}`)).status).toBe(200);

    // Conflicts that are not transient keep their own codes on the leader.
    const duplicate = await clientOn(leader).post('/v1/orderbook/orders', order(t, 'ETH-DAI', 'SELL', '2100', '1', 'after-takeover'));
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.code).toBe('DUPLICATE_ENTRY');
    expect(duplicate.headers.get('retry-after')).toBeNull();
  });
});

describe('engine status', () => {
  it('shows on every node the same cluster view: each shard led by one of the three nodes, with its lease and fencing token', async () => {
    await settledCluster(nodes.map((n) => clientOn(n)));
    const statuses = await Promise.all(nodes.map((n) => engineStatus(clientOn(n))));
    expect(statuses.map((s) => s.nodeId)).toEqual(nodes.map((n) => n.nodeId));
    const ids = new Set(nodes.map((n) => n.nodeId));
    const view = statuses[0].cluster.map((c) => ({ shard: c.shard, leader: c.leader, fencingToken: c.fencingToken }));
    expect(view.map((c) => c.shard)).toEqual([0, 1, 2, 3]);
    for (const c of view) expect(ids.has(c.leader!)).toBe(true);
    for (const s of statuses) {
      expect(s.cluster.map((c) => ({ shard: c.shard, leader: c.leader, fencingToken: c.fencingToken }))).toEqual(view);
      // What a node says it holds is what the cluster view says it leads, under the same tokens.
      expect(s.shards.map((h) => ({ shard: h.shard, leader: s.nodeId, fencingToken: h.fencingToken }))).toEqual(view.filter((c) => c.leader === s.nodeId));
      for (const h of s.shards) {
        expect(h.state).toBe('LEADING');
        expect(new Date(h.leaseExpiresAt).getTime()).toBeGreaterThan(new Date(h.acceptingUntil).getTime());
      }
    }
    // The leader of a market's shard reports the market's committed sequence and its queue.
    const daiLeader = statuses.find((s) => s.nodeId === view.find((c) => c.shard === SHARD['ETH-DAI'])!.leader)!;
    const stored = await k.db('markets').where({ id: marketIds['ETH-DAI'] }).first();
    expect(daiLeader.markets.find((m) => m.symbol === 'ETH-DAI')).toEqual({ marketId: marketIds['ETH-DAI'], symbol: 'ETH-DAI', sequence: String(stored.sequence), queueDepth: 0 });
  });
});

describe('kill -9 of a leader under continuous order flow', () => {
  interface Sent {
    org: BookOrg;
    clientOrderId: string;
    id?: string;
  }
  const sent: Sent[] = [];
  let stop = false;
  let answered = 0;

  /** Sends until answered: on NOT_LEADER to the leader it names (or the next node after a pause), on a broken connection to the next node, the same clientOrderId each time. */
  async function place(t: { org: BookOrg; walletId: string }, body: Record<string, unknown>, s: Sent): Promise<void> {
    let target = 0;
    for (let attempt = 0; attempt < 200; attempt++) {
      const live = nodes.filter(isAlive);
      const node = live[target % live.length];
      const res: ApiResponse | undefined = await tryRequest(() => clientOn(node, t.org).post('/v1/orderbook/orders', body));
      if (res && res.status === 201) {
        s.id = res.body.data.id;
        answered++;
        return;
      }
      const code = res?.body?.error?.code;
      if (res && (code === 'DUPLICATE_ENTRY' || code === 'INSUFFICIENT_FUNDS')) return; // committed by an attempt whose answer was lost; or refused
      if (res && code !== 'NOT_LEADER') throw new Error(`unexpected answer ${res.status}: ${JSON.stringify(res.body)}`);
      const named = live.findIndex((n) => n.nodeId === res?.body?.error?.details?.leader);
      if (named >= 0 && named !== target % live.length) target = named;
      else {
        target++;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error(`order ${s.clientOrderId} never answered`);
  }

  async function flow(client: number, t: { org: BookOrg; walletId: string }): Promise<void> {
    for (let i = 0; !stop; i++) {
      const side = Math.random() < 0.5 ? 'BUY' : 'SELL';
      const price = (2000 + (Math.floor(Math.random() * 11) - 5) / 100).toFixed(2);
      const quantity = (0.001 * (1 + Math.floor(Math.random() * 50))).toFixed(3);
      const s: Sent = { org: t.org, clientOrderId: `flow-c${client}-${i}` };
      sent.push(s);
      await place(t, order(t, 'ETH-USDC', side, price, quantity, s.clientOrderId), s);
    }
  }

  it('a new leader takes the shard within about a lease; every 2xx order is recorded once, the sequence is gapless, the ledger balances', async () => {
    const shard = SHARD['ETH-USDC'];
    const leader = byId(await leaderOf(clientOn(nodes[0]), shard))!;
    const clients = traders.flatMap((t, o) => [0, 1].map((c) => flow(o * 2 + c, t)));
    const flowing = Promise.all(clients);
    await eventually(() => answered >= 30, 30_000);

    leader.proc.child.kill('SIGKILL');
    const answeredAtKill = answered;
    const survivor = nodes.find((n) => n !== leader && isAlive(n))!;
    const newLeader = await eventually(async () => {
      const now = await leaderOf(clientOn(survivor), shard);
      return now && now !== leader.nodeId ? now : undefined;
    }, 15_000);
    expect([...nodes.filter((n) => n !== leader).map((n) => n.nodeId)]).toContain(newLeader);
    // The flow goes on through the new leader.
    await eventually(() => answered >= answeredAtKill + 30, 30_000);
    stop = true;
    await flowing;

    const accepted = sent.filter((s) => s.id).map((s) => ({ id: s.id!, clientOrderId: s.clientOrderId, orgId: s.org.orgId }));
    await expectMarketRecord(k, marketIds['ETH-USDC'], accepted);
    // The new leader's book is the record's open orders.
    const book = (await clientOn(byId(newLeader)!).get('/v1/orderbook/markets/ETH-USDC/book?levels=500')).body.data;
    const open = await k.db('orders').where({ marketId: marketIds['ETH-USDC'] }).whereIn('status', ['OPEN', 'PARTIALLY_FILLED']).count({ n: '*' }).first();
    expect([...book.bids, ...book.asks].reduce((n: number, l: { orders: number }) => n + l.orders, 0)).toBe(Number(open!.n));
    const stored = await k.db('markets').where({ id: marketIds['ETH-USDC'] }).first();
    expect(book.sequence).toBe(String(stored.sequence));
  }, 90_000);
});
