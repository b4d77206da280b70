import type autocannon from 'autocannon';
import { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { BenchServer, callJson as call, cpuRatio, keelCli, LoadRun, loadRun, medianRun, ratioToYardstick, residentMb, startNodeProcess, startTradingBench, stopProcess, intoTrading } from './support';

/**
 * End-to-end `POST /v1/orderbook/orders` on the pro host: each answer comes after the order, its
 * fills, trades and ledger moves are committed. Keel runs as the operator's guide lays out a node
 * that trades: the pro host on an order-book node of its own, the core host and the worker (deposits,
 * settlement, the outbox) on another, the dev chain in a third process standing in for the chain's
 * node (BENCH_KEEL_LAYOUT=one-process: every role and the dev chain from one `keel start`, the
 * sandbox's way). Keel's CPU is its two processes' (each also given apart); the dev chain's counts in
 * the machine's only.
 * Two wallets funded through the faucet and the deposit watcher (the real path) trade one market:
 * limit orders of 0.01 ETH, buys at 1990–2005 and sells at 1995–2010 USDC, so about a third cross
 * and the rest rest. 50 connections; 1 warm-up and `runs` measured runs; medians reported.
 * Beside it, run for run and with the same bodies, three yardsticks: a bare node:http server that
 * spends the rate limit in Redis and group-commits each order as one row (orders-floor-server.ts),
 * and the least the design card's stack does for the same placement (orders-stack-floor-server.ts:
 * Fastify, the rate limit, a type-graphql mutation compiled by graphql-jit, the same group-committed row),
 * so the part of the gap that is Keel's own shows apart from the stack's, and that stack floor with
 * Keel's order service behind it (orders-service-floor-server.ts, on a market of its own with the
 * same rules and wallets), so the part that is Keel's data model (matching, orders, trades, ledger)
 * shows apart from its request path. Each server's CPU time per
 * answered order is taken too (all its threads), and Keel's as a multiple of each yardstick's, and
 * the CPU of the benchmark database's PostgreSQL backends per answered order
 * (`databaseCpuMicrosPerRequest`: Keel's and the yardsticks' share the database, each measured in its own run).
 *
 * With `cancels` as the fourth argument, half of the flow is cancels, as a market maker's quoting:
 * each connection places an order that rests (buys below 1990, sells from 1995: none crosses) and
 * then cancels it (`DELETE /v1/orderbook/orders/{id}`). The yardsticks take the same number of
 * requests, each one group-committed row (the least a durable cancel costs); the service floor,
 * which has no cancel, is left out.
 *
 * Without cancels, a fourth: the work floor (orders-work-floor-server.ts), the same durable work as
 * Keel's group commit (order rows, makers' updates, trades, the journal, balances, sequences, and
 * settlement's three rewrites of each trade, on Keel's tables) in one hand-written statement with no Keel code
 * around it, on a market of its own: its rate over the yardstick's is the ceiling for that work here.
 * And a fifth: the stack work floor (orders-stack-work-floor-server.ts), that durable work behind the
 * stack floor's request path (Fastify, the rate limit, the graphql-jit mutation) instead of node:http,
 * on a market of its own: the most the design card's stack can reach with it, none of Keel's own code.
 */
const SERVICE_FLOOR_MARKET = 'ETHFLOOR-USDC';
const WORK_FLOOR_MARKET = 'ETHWORK-USDC';
const STACK_WORK_FLOOR_MARKET = 'ETHSTACKWORK-USDC';

export async function run(args: string[]): Promise<object> {
  const seconds = Number(args[0] ?? 10);
  const runs = Number(args[1] ?? 3);
  const connections = Number(args[2] ?? 50);
  const cancels = args[3] === 'cancels';
  const core = 4920;
  const pro = 4921;
  const layout = process.env.BENCH_KEEL_LAYOUT ?? 'order-book-node';
  if (layout !== 'one-process' && layout !== 'order-book-node') throw new Error(`BENCH_KEEL_LAYOUT: one-process or order-book-node, not ${layout}`);
  const { env, server, org, coreHeaders, proHeaders, coreUrl, proUrl, chain, stop } = await startTradingBench('orders', core, pro, 31398, layout);
  const floors: ChildProcess[] = [];
  try {
    // Markets are the operator's: created with its command, as a deployment would.
    // The service floor trades a market of its own with the same rules, so neither finds the other's
    // commits on its book (each would reload it from the record, inside the next measured run).
    for (const symbol of ['ETH-USDC', SERVICE_FLOOR_MARKET, WORK_FLOOR_MARKET, STACK_WORK_FLOOR_MARKET]) {
      keelCli(['market', 'create', '--symbol', symbol, '--base', 'ETH', '--quote', 'USDC', '--tick-size', '0.01', '--lot-size', '0.001', '--min-notional', '1', '--maker-fee', '0.001', '--taker-fee', '0.002', '--json'], env);
    }
    const buyer = (await call(`${coreUrl}/v1/master-wallets`, 'POST', coreHeaders, { blockchainId: chain.id, name: 'buyer' })).data;
    const seller = (await call(`${coreUrl}/v1/master-wallets`, 'POST', coreHeaders, { blockchainId: chain.id, name: 'seller' })).data;
    // Keel and the service floor both lock the buyer's USDC in resting buys (a faucet request sends at most 1,000,000).
    for (let i = 0; i < 3; i++) await call(`${coreUrl}/v1/dev/faucet`, 'POST', coreHeaders, { address: buyer.walletAddress, asset: 'USDC', amount: '1000000' });
    // Coin for the gas of the buyer's settlement funding (approve and deposit of its USDC).
    await call(`${coreUrl}/v1/dev/faucet`, 'POST', coreHeaders, { address: buyer.walletAddress, asset: 'ETH', amount: '10' });
    await call(`${coreUrl}/v1/dev/faucet`, 'POST', coreHeaders, { address: seller.walletAddress, asset: 'ETH', amount: '5000' });
    // Orders trade what is in trading (the settlement contract): each wallet deposits it there first, keeping some ETH for gas.
    const bench = { coreUrl, proUrl, coreHeaders, proHeaders, chain };
    await Promise.all([intoTrading(bench, buyer.id, 'USDC', '3000000'), intoTrading(bench, seller.id, 'ETH', '4990')]);

    let n = 0;
    const nextOrder = (market: string) => {
      const buy = n++ % 2 === 0;
      const cents = Math.floor(Math.random() * 1500);
      // With cancels, buys are priced below the lowest sell, so every order rests until it is cancelled.
      const from = buy ? (cancels ? 197_500 : 199_000) : 199_500;
      return JSON.stringify({ walletId: buy ? buyer.id : seller.id, market, side: buy ? 'BUY' : 'SELL', type: 'LIMIT', price: (from + cents) / 100 + '', quantity: '0.01', timeInForce: 'GTC' });
    };
    const yardsticks = [
      { what: 'node:http + the Redis rate limit + one group-committed INSERT per order, nothing else', script: 'orders-floor-server.js', port: 4922, env: { DATABASE_URL: env.DATABASE_URL } },
      {
        what: "the stack's floor: Fastify + Keel's Redis rate limit + a type-graphql mutation compiled by graphql-jit + the same group-committed INSERT + the single envelope",
        script: 'orders-stack-floor-server.js',
        port: 4923,
        env: { DATABASE_URL: env.DATABASE_URL },
      },
      {
        what: "the service floor: the stack's floor with Keel's order service in place of the one row (checks, matching, the group commit of orders, trades, ledger and balances, the answer's view) on Keel's database and wallets, a market of its own with the same rules; no authentication, REST shim, idempotency or request context",
        script: 'orders-service-floor-server.js',
        port: 4924,
        env: { ...env, ORGANIZATION_ID: org.orgId },
        market: SERVICE_FLOOR_MARKET,
      },
      {
        what: "the work floor: node:http, the rate limit and, group-committed in one hand-written statement on Keel's tables, what Keel's group commit writes for the same flow (each order's row, the makers it filled, a trade per fill, the journal summed per wallet, asset and kind, balances once per group, the market's sequences) and settlement's three rewrites of each trade (batched, submitted, confirmed); the least matching (the oldest order at the other side's best price, when it crosses), no checks",
        script: 'orders-work-floor-server.js',
        port: 4925,
        env: { DATABASE_URL: env.DATABASE_URL, ORGANIZATION_ID: org.orgId, MARKET: WORK_FLOOR_MARKET },
        market: WORK_FLOOR_MARKET,
      },
      {
        what: "the stack work floor: the work floor's durable work (the same hand-written group-committed statement, settlement's rewrites and least matching) behind the stack floor's request path (Fastify, the rate limit, the type-graphql mutation compiled by graphql-jit, the envelope) instead of node:http; none of Keel's own code",
        script: 'orders-stack-work-floor-server.js',
        port: 4926,
        env: { DATABASE_URL: env.DATABASE_URL, ORGANIZATION_ID: org.orgId, MARKET: STACK_WORK_FLOOR_MARKET },
        market: STACK_WORK_FLOOR_MARKET,
      },
    ];
    if (cancels) yardsticks.splice(2);
    for (const y of yardsticks) {
      floors.push(await startNodeProcess([join(__dirname, y.script)], { ...y.env, PORT: String(y.port) }, `http://127.0.0.1:${y.port}/ready`));
    }
    const headers = { ...proHeaders, 'content-type': 'application/json' };
    const place = (market: string) => ({ method: 'POST' as const, headers, setupRequest: (req: object) => ({ ...req, body: nextOrder(market) }) });
    // Keel's cancel of the order the connection has just placed; a yardstick's second request of the pair.
    const keelCancel = {
      method: 'DELETE' as const,
      headers: proHeaders,
      setupRequest: (req: object, context: { orderId?: string }) => ({ ...req, path: `/v1/orderbook/orders/${context.orderId}` }),
    };
    const load = (url: string, duration: number, measured?: ChildProcess | BenchServer, market = 'ETH-USDC', keel = false) =>
      loadRun(
        {
          url,
          connections,
          duration,
          requests: !cancels
            ? [place(market)]
            : keel
              ? [{ ...place(market), onResponse: (_status: number, body: string, context: { orderId?: string }) => void (context.orderId = JSON.parse(body).data?.id) }, keelCancel]
              : [place(market), place(market)],
        } as autocannon.Options,
        measured,
        measured && env.DATABASE_URL,
      );
    const keelUrl = `${proUrl}/v1/orderbook/orders`;
    const floorUrl = (port: number) => `http://127.0.0.1:${port}/`;
    await load(keelUrl, 3, undefined, 'ETH-USDC', true); // warm-up
    for (const y of yardsticks) await load(floorUrl(y.port), 3, undefined, y.market);
    const results: LoadRun[] = [];
    const floorResults: LoadRun[][] = yardsticks.map(() => []);
    for (let i = 0; i < runs; i++) {
      results.push(await load(keelUrl, seconds, server, 'ETH-USDC', true));
      for (const [j, y] of yardsticks.entries()) floorResults[j].push(await load(floorUrl(y.port), seconds, floors[j], y.market));
    }
    const [bare, stack, service, work, stackWork] = floorResults;
    const summary = (rs: LoadRun[]) => medianRun(rs, 'ordersPerSecond');
    return {
      benchmark: 'orders',
      endpoint: cancels ? 'POST /v1/orderbook/orders then DELETE /v1/orderbook/orders/{id}, alternately (pro host, each committed before its answer); rates are of requests' : 'POST /v1/orderbook/orders (pro host, committed before the answer)',
      connections,
      secondsPerRun: seconds,
      runs: results,
      median: summary(results),
      layout,
      peakRssMbSinceStart: server.processes.reduce((sum, p) => sum + (residentMb(p.pid, 'VmHWM') ?? 0), 0),
      yardstick: { what: yardsticks[0].what, runs: bare, median: summary(bare) },
      stackFloor: { what: yardsticks[1].what, runs: stack, median: summary(stack) },
      ...(service && { serviceFloor: { what: yardsticks[2].what, runs: service, median: summary(service) } }),
      ...(work && { workFloor: { what: yardsticks[3].what, runs: work, median: summary(work) } }),
      ...(stackWork && { stackWorkFloor: { what: yardsticks[4].what, runs: stackWork, median: summary(stackWork) } }),
      ratioToYardstick: ratioToYardstick(results, bare),
      ratioToStackFloor: ratioToYardstick(results, stack),
      ...(service && { ratioToServiceFloor: ratioToYardstick(results, service) }),
      stackFloorRatioToYardstick: ratioToYardstick(stack, bare),
      ...(service && { serviceFloorRatioToYardstick: ratioToYardstick(service, bare) }),
      ...(work && { ratioToWorkFloor: ratioToYardstick(results, work), workFloorRatioToYardstick: ratioToYardstick(work, bare) }),
      ...(stackWork && { ratioToStackWorkFloor: ratioToYardstick(results, stackWork), stackWorkFloorRatioToYardstick: ratioToYardstick(stackWork, bare) }),
      cpuPerOrderTimesYardstick: cpuRatio(results, bare),
      cpuPerOrderTimesStackFloor: cpuRatio(results, stack),
      machineCpuPerOrderTimesYardstick: cpuRatio(results, bare, 'machineCpuMicrosPerRequest'),
      machineCpuPerOrderTimesStackFloor: cpuRatio(results, stack, 'machineCpuMicrosPerRequest'),
      ...(service && { serviceFloorMachineCpuPerOrderTimesYardstick: cpuRatio(service, bare, 'machineCpuMicrosPerRequest') }),
      ...(stackWork && { stackWorkFloorMachineCpuPerOrderTimesStackFloor: cpuRatio(stackWork, stack, 'machineCpuMicrosPerRequest') }),
      target: { ordersPerSecond: 5000, latencyP99Ms: 25 },
    };
  } finally {
    await stop();
    for (const floor of floors) await stopProcess(floor);
  }
}
