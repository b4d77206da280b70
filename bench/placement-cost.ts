import { onboardOrganization } from '../src/modules/api-keys/onboarding';
import { issueOperatorKey } from '../src/modules/api-keys/operator-key';
import { buildHostSchema } from '../src/schema';
import { orderbookRoutes } from '../rest-compat/routes/orderbook';
import { compileRoute } from '../rest-compat/compile';
import { compiledRunner } from '../rest-compat/executor';
import Fastify from 'fastify';
import { Pool } from 'pg';
import type { Keel } from '../src/app';
import { cpuPerCall, startBenchKeel } from './in-process';
import { ordersStackFloorApp, storedAsOneRow } from './orders-stack-floor-server';
import { groupCommittedOrders } from './group-commit';

/**
 * CPU time per order placement inside one Keel process (api and orderbook roles, no settlement),
 * with no sockets: `POST /v1/orderbook/orders` through Fastify's inject (authentication, the rate
 * limit, the REST shim, the GraphQL mutation, the placement and its group commit), and the order
 * REST row's GraphQL mutation run by the shim's runner without Fastify (type-graphql's argument
 * validation, the resolver and the service), and the order service's `place` called directly (the
 * placement and its commit alone); 50 in flight as in the orders benchmark, with its order stream:
 * limit orders of 0.01 ETH, buys at 1990–2005 and sells at 1995–2010 USDC, about a third crossing.
 * The differences tell what HTTP with its hooks, authentication and rate limit, and GraphQL add.
 * Beside them, the orders benchmark's stack floor taking the same stream through its own inject
 * (Fastify, the rate limit, a type-graphql mutation, one group-committed row): what the stack alone
 * spends on a placement.
 * `npm run bench -- placement-cost [placements] [runs] request-path` measures the path around the
 * placement alone: the order service answers one fixed order (placed for real first), and beside the
 * REST and GraphQL calls run `/health`, an authenticated request to no route, and a bare Fastify app
 * through inject, with no route hooks (GET) and taking the same body to answer that order (POST).
 * `npm run bench -- placement-cost [placements] [runs] client-order-ids` gives every order a
 * clientOrderId of its own, as a market maker's orders carry.
 * CPU includes V8's garbage-collector threads, not PostgreSQL's or Redis's.
 */
export async function run(args: string[]): Promise<object> {
  const placements = Number(args[0] ?? 4000);
  const runs = Number(args[1] ?? 3);
  const requestPathOnly = args[2] === 'request-path';
  const clientOrderIds = args[2] === 'client-order-ids';
  const { keel, config } = await startBenchKeel('placement_cost', { KEEL_ROLES: 'api,orderbook', SETTLEMENT_ENABLED: 'false' });
  try {
    const { services, platform } = keel;
    const core = keel.core!.app;
    const pro = keel.pro!.app;
    const org = await onboardOrganization(platform.db, services, { name: 'bench', tier: 'Business', proAccess: true });
    const coreHeaders = { apikey: org.adminKey, orgid: org.orgId };
    const proHeaders = { apikey: org.proKey!, orgid: org.orgId, 'content-type': 'application/json' };
    const [chain] = (await services.chains.listBlockchains({ limit: 1, offset: 0 })).items;
    const assets = Object.fromEntries((await services.chains.listAssets({ limit: 100, offset: 0, blockchainId: chain.id })).items.map((a) => [a.symbol, a]));
    const operator = await issueOperatorKey(services);
    const market = await pro.inject({
      method: 'POST',
      url: '/v1/orderbook/markets',
      headers: { apikey: operator.key, orgid: operator.orgId, 'content-type': 'application/json' },
      payload: { symbol: 'ETH-USDC', baseAssetId: assets.ETH.id, quoteAssetId: assets.USDC.id, tickSize: '0.01', lotSize: '0.001', minNotional: '1', makerFee: '0.001', takerFee: '0.002' },
    });
    if (market.statusCode !== 201) throw new Error(`market: ${market.statusCode} ${market.body}`);
    const wallet = async (name: string, assetId: string, amount: bigint): Promise<string> => {
      const created = await core.inject({ method: 'POST', url: '/v1/master-wallets', headers: { ...coreHeaders, 'content-type': 'application/json' }, payload: { blockchainId: chain.id, name } });
      if (created.statusCode !== 201) throw new Error(`wallet: ${created.statusCode} ${created.body}`);
      const walletId = created.json().data.id as string;
      await platform.db.transaction((trx) => services.ledger.credit(trx, { organizationId: org.orgId, walletId, assetId, amount, reference: `bench:${name}` }));
      return walletId;
    };
    const buyer = await wallet('buyer', assets.USDC.id, 10n ** 15n * 10n ** BigInt(assets.USDC.decimals));
    const seller = await wallet('seller', assets.ETH.id, 10n ** 9n * 10n ** BigInt(assets.ETH.decimals));

    let n = 0;
    const nextOrder = () => {
      const buy = n++ % 2 === 0;
      const cents = Math.floor(Math.random() * 1500);
      const order = { walletId: buy ? buyer : seller, market: 'ETH-USDC', side: buy ? 'BUY' : 'SELL', type: 'LIMIT', price: ((buy ? 199_000 : 199_500) + cents) / 100 + '', quantity: '0.01', timeInForce: 'GTC' } as const;
      return clientOrderIds ? { ...order, clientOrderId: `mm-${n}` } : order;
    };
    const placeRow = orderbookRoutes.find((r) => r.method === 'POST' && r.path === '/v1/orderbook/orders')!;
    const schema = await buildHostSchema('pro');
    const placeOperation = compiledRunner(schema, compileRoute(schema, placeRow).document);
    const principal = await platform.authenticator.authenticate('pro', { apiKey: org.proKey!, orgId: org.orgId });
    const floorPool = new Pool({ connectionString: config.DATABASE_URL, max: 5 });
    const floor = await ordersStackFloorApp(storedAsOneRow(await groupCommittedOrders(floorPool)), platform.rateLimiter);
    const placing: Record<string, () => Promise<unknown>> = {
      placeOverRest: async () => {
        const res = await pro.inject({ method: 'POST', url: '/v1/orderbook/orders', headers: proHeaders, payload: nextOrder() });
        if (res.statusCode !== 201) throw new Error(`place: ${res.statusCode} ${res.body}`);
      },
      placeOperationOnly: async () => {
        const result = await placeOperation({ input: nextOrder() }, { host: 'pro', principal, requestId: 'bench', services });
        if (result.errors?.length) throw result.errors[0];
      },
    };
    const calls = requestPathOnly
      ? { ...placing, ...(await requestPathCalls(keel, org.orgId, proHeaders, nextOrder)) }
      : {
          ...placing,
          placeServiceOnly: () => services.orders.place(org.orgId, nextOrder() as Parameters<typeof services.orders.place>[1]),
          stackFloorPlace: async () => {
            const res = await floor.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, payload: nextOrder() });
            if (res.statusCode !== 201) throw new Error(`the stack floor: ${res.statusCode} ${res.body}`);
          },
        };
    const costs = await cpuPerCall(calls, { perRun: placements, runs, inFlight: 50 });
    const result = Object.fromEntries(Object.entries(costs).map(([name, c]) => [name, { cpuMicrosPerPlacement: c.cpuMicros, placementsPerSecond: c.callsPerSecond, runs: c.runs }]));
    await floor.close();
    await floorPool.end();
    return {
      benchmark: 'placement-cost',
      placementsPerRun: placements,
      inFlight: 50,
      ...(requestPathOnly ? { mode: 'request-path (the order service answers a fixed order)' } : {}),
      ...(clientOrderIds ? { mode: 'client-order-ids (every order carries a clientOrderId of its own)' } : {}),
      ...result,
      ...(result.placeOverRest && result.placeOperationOnly ? { httpShareMicros: result.placeOverRest.cpuMicrosPerPlacement - result.placeOperationOnly.cpuMicrosPerPlacement } : {}),
      ...(result.placeOperationOnly && result.placeServiceOnly ? { graphqlShareMicros: result.placeOperationOnly.cpuMicrosPerPlacement - result.placeServiceOnly.cpuMicrosPerPlacement } : {}),
    };
  } finally {
    await keel.stop();
  }
}

/**
 * The request-path mode's calls: the order service swapped for one answering a fixed order, and the
 * baselines around it (Keel's /health and an authenticated 404, a bare Fastify GET and POST).
 */
async function requestPathCalls(keel: Keel, organizationId: string, headers: Record<string, string>, nextOrder: () => object): Promise<Record<string, () => Promise<unknown>>> {
  const { services } = keel;
  const placed = await services.orders.place(organizationId, nextOrder() as Parameters<typeof services.orders.place>[1]);
  services.orders.place = async () => ({ ...placed });
  const bare = Fastify();
  bare.get('/', async () => 'ok');
  bare.post('/', async (request, reply) => reply.code(201).send({ data: { ...placed, ...(request.body as object) } }));
  await bare.ready();
  const expect = (status: number, what: string) => (res: { statusCode: number }) => {
    if (res.statusCode !== status) throw new Error(`${what}: ${res.statusCode}`);
  };
  const pro = keel.pro!.app;
  return {
    health: () => pro.inject({ method: 'GET', url: '/health' }).then(expect(200, 'health')),
    authenticatedNotFound: () => pro.inject({ method: 'GET', url: '/v1/no-such-route', headers }).then(expect(404, 'not found')),
    bareFastifyGet: () => bare.inject({ method: 'GET', url: '/' }).then(expect(200, 'bare GET')),
    bareFastifyPost: () => bare.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, payload: nextOrder() }).then(expect(201, 'bare POST')),
  };
}
