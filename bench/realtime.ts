import { ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import IORedis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { callJson as call, keelCli, median, startNodeProcess, startTradingBench, stopProcess, intoTrading } from './support';


/** Resident memory of a process, from /proc (Linux). */
function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) * 1024;
}

interface Delivery {
  messages: number;
  seconds: number;
  messagesPerSecond: number;
  lagP50Ms: number;
  lagP99Ms: number;
  closedEarly: number;
}

/** The subscriber process, driven over IPC: one request, one answer. */
class Subscribers {
  private readonly child: ChildProcess;
  constructor() {
    this.child = fork(join(__dirname, 'realtime-subscribers.js'), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  }
  ask<T>(command: object): Promise<T> {
    return new Promise((resolve, reject) => {
      this.child.once('message', (m: { error?: string }) => (m.error ? reject(new Error(m.error)) : resolve(m as T)));
      this.child.send(command);
    });
  }
  stop(): void {
    this.child.kill('SIGKILL');
  }
}

const MARKETS = [
  ['ETH', 'USDC'],
  ['ETH', 'USDT'],
  ['ETH', 'DAI'],
  ['USDC', 'USDT'],
  ['USDT', 'USDC'],
  ['DAI', 'USDC'],
  ['USDC', 'DAI'],
  ['DAI', 'USDT'],
] as const;

/**
 * Realtime delivery: `connections` graphql-ws subscribers (default 1,000; a separate process) on
 * one Keel node, each on the book and the trades of one of 8 markets, while orders flow into all
 * 8 markets through the REST API (16 connections, random limit orders around 2,000, about a third
 * crossing). Per run: messages delivered per second, p50/p99 lag from commit (the message's
 * timestamp) to arrival; memory per connection from Keel's resident size before and after the
 * subscribers connect. Beside it, run for run with the same order flow, the yardstick
 * (realtime-floor-server.ts): bare `ws` broadcasting the same messages from the same Redis channel.
 */
export async function run(args: string[]): Promise<object> {
  const connections = Number(args[0] ?? 1000);
  const seconds = Number(args[1] ?? 10);
  const runs = Number(args[2] ?? 3);
  /** Changes per second injected on the bus in the capacity runs (each one trade, to every subscriber of its market). */
  const injectedPerSecond = Number(args[3] ?? 800);
  const core = 4930;
  const pro = 4931;
  const floorPort = 4932;
  const { env, proNode, org, coreHeaders, proHeaders, coreUrl, proUrl, chain, stop } = await startTradingBench('realtime', core, pro, 31399);
  let floor: ChildProcess | undefined;
  const subscribers = new Subscribers();
  try {
    for (const [base, quote] of MARKETS) {
      keelCli(['market', 'create', '--base', base, '--quote', quote, '--tick-size', '0.01', '--lot-size', '0.001', '--min-notional', '1', '--maker-fee', '0.001', '--taker-fee', '0.002', '--json'], env);
    }
    const buyer = (await call(`${coreUrl}/v1/master-wallets`, 'POST', coreHeaders, { blockchainId: chain.id, name: 'buyer' })).data;
    const seller = (await call(`${coreUrl}/v1/master-wallets`, 'POST', coreHeaders, { blockchainId: chain.id, name: 'seller' })).data;
    const funding: [typeof buyer, string][] = [
      [buyer, 'ETH'], // coin for the gas of its deposits to trading
      [buyer, 'USDC'],
      [buyer, 'USDT'],
      [buyer, 'DAI'],
      [seller, 'ETH'],
      [seller, 'USDC'],
      [seller, 'USDT'],
      [seller, 'DAI'],
    ];
    for (const [wallet, asset] of funding) await call(`${coreUrl}/v1/dev/faucet`, 'POST', coreHeaders, { address: wallet.walletAddress, asset, amount: asset === 'ETH' ? '5000' : '1000000' });
    // Orders trade balances deposited into the settlement contract: all but some coin for the deposits' gas.
    const bench = { coreUrl, proUrl, coreHeaders, proHeaders, chain };
    await Promise.all(
      [buyer, seller].map(async (wallet) => {
        for (const [owner, symbol] of funding) if (owner === wallet) await intoTrading(bench, wallet.id, symbol, symbol === 'ETH' ? '4990' : '1000000');
      }),
    );

    const symbols = MARKETS.map(([b, q]) => `${b}-${q}`);
    let n = 0;
    const nextOrder = () => {
      const buy = n++ % 2 === 0;
      const cents = Math.floor(Math.random() * 1500);
      const market = symbols[Math.floor(n / 2) % symbols.length];
      return JSON.stringify({ walletId: buy ? buyer.id : seller.id, market, side: buy ? 'BUY' : 'SELL', type: 'LIMIT', price: ((buy ? 199_000 : 199_500) + cents) / 100 + '', quantity: '0.01', timeInForce: 'GTC' });
    };
    const orderFlow = (duration: number) =>
      autocannon({
        url: `${proUrl}/v1/orderbook/orders`,
        connections: 16,
        duration,
        requests: [{ method: 'POST', headers: { ...proHeaders, 'content-type': 'application/json' }, setupRequest: (req: object) => ({ ...req, body: nextOrder() }) }],
      });
    await orderFlow(3); // warm-up: books with depth on both sides

    floor = await startNodeProcess([join(__dirname, 'realtime-floor-server.js')], { REDIS_PREFIX: env.REDIS_PREFIX, PORT: String(floorPort) }, `http://127.0.0.1:${floorPort}/ready`);
    const measure = async (target: 'keel' | 'floor') => {
      const before = rssBytes(target === 'keel' ? proNode.pid! : floor!.pid!);
      const url = target === 'keel' ? `ws://127.0.0.1:${pro}` : `ws://127.0.0.1:${floorPort}`;
      await subscribers.ask({ cmd: 'connect', target, url, connections, markets: symbols, apiKey: org.proKey, orgId: org.orgId });
      await new Promise((r) => setTimeout(r, 1000));
      const after = rssBytes(target === 'keel' ? proNode.pid! : floor!.pid!);
      await subscribers.ask({ cmd: 'start' });
      const load = await orderFlow(seconds);
      const delivery = await subscribers.ask<Delivery>({ cmd: 'stop' });
      await subscribers.ask({ cmd: 'close' });
      return { ...delivery, ordersPerSecond: load.requests.average, memoryPerConnectionBytes: Math.round((after - before) / connections) };
    };
    const keelRuns = [];
    const floorRuns = [];
    for (let i = 0; i < runs; i++) {
      keelRuns.push(await measure('keel'));
      floorRuns.push(await measure('floor'));
    }

    // Capacity: the same subscribers, fed at a fixed rate with trade messages injected on the bus
    // (as a committing node publishes them), so delivery is measured beyond what this machine's
    // order flow can offer.
    const marketIds = new Map<string, string>(((await call(`${proUrl}/v1/orderbook/markets?limit=100`, 'GET', proHeaders)).data as { id: string; symbol: string }[]).map((m) => [m.symbol, m.id]));
    const redis = new IORedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const inject = async (duration: number) => {
      const perTick = Math.max(1, Math.round(injectedPerSecond / 100));
      const end = Date.now() + duration * 1000;
      let sequence = 1_000_000_000;
      while (Date.now() < end) {
        const tick = Date.now();
        const pipeline = redis.pipeline();
        for (let i = 0; i < perTick; i++) {
          const symbol = symbols[i % symbols.length];
          const trade = { id: randomUUID(), sequence: String(sequence++), makerOrderId: randomUUID(), takerOrderId: randomUUID(), makerWalletId: buyer.id, takerWalletId: seller.id, makerOrganizationId: '', takerOrganizationId: '', takerSide: 'SELL', price: '2000.5', quantity: '0.01', makerFee: '0.02', takerFee: '0.04', settlementStatus: 'QUEUED' };
          pipeline.publish(`${env.REDIS_PREFIX}realtime`, JSON.stringify({ marketId: marketIds.get(symbol), symbol, committedAt: Date.now(), book: null, trades: [trade], orders: [], balances: [] }));
        }
        await pipeline.exec();
        await new Promise((r) => setTimeout(r, Math.max(0, 10 - (Date.now() - tick))));
      }
    };
    const capacity = async (target: 'keel' | 'floor') => {
      const url = target === 'keel' ? `ws://127.0.0.1:${pro}` : `ws://127.0.0.1:${floorPort}`;
      await subscribers.ask({ cmd: 'connect', target, url, connections, markets: symbols, apiKey: org.proKey, orgId: org.orgId });
      await subscribers.ask({ cmd: 'start' });
      await inject(seconds);
      await new Promise((r) => setTimeout(r, 500));
      const delivery = await subscribers.ask<Delivery>({ cmd: 'stop' });
      await subscribers.ask({ cmd: 'close' });
      return delivery;
    };
    const keelCapacity: Delivery[] = [];
    const floorCapacity: Delivery[] = [];
    try {
      for (let i = 0; i < runs; i++) {
        keelCapacity.push(await capacity('keel'));
        floorCapacity.push(await capacity('floor'));
      }
    } finally {
      redis.disconnect();
    }
    const capacitySummary = (rs: Delivery[]) => ({
      messagesPerSecond: Math.round(median(rs.map((r) => r.messagesPerSecond))),
      lagP50Ms: median(rs.map((r) => r.lagP50Ms)),
      lagP99Ms: median(rs.map((r) => r.lagP99Ms)),
      connectionsClosedAsSlow: median(rs.map((r) => r.closedEarly)),
    });
    type Run = (typeof keelRuns)[number];
    const summary = (rs: Run[]) => ({
      messagesPerSecond: Math.round(median(rs.map((r) => r.messagesPerSecond))),
      lagP50Ms: median(rs.map((r) => r.lagP50Ms)),
      lagP99Ms: median(rs.map((r) => r.lagP99Ms)),
      ordersPerSecond: Math.round(median(rs.map((r) => r.ordersPerSecond))),
      memoryPerConnectionBytes: median(rs.map((r) => r.memoryPerConnectionBytes)),
    });
    const keel = summary(keelRuns);
    const yardstick = summary(floorRuns);
    return {
      benchmark: 'realtime',
      what: `${connections} graphql-ws connections on one node, each subscribed to orderBook and trades of one of ${MARKETS.length} markets, while orders flow into all of them`,
      connections,
      secondsPerRun: seconds,
      runs: keelRuns,
      median: keel,
      yardstick: { what: 'bare ws broadcasting the same book and trade messages from the same Redis channel', runs: floorRuns, median: yardstick },
      ratioToYardstick: Number((keel.messagesPerSecond / yardstick.messagesPerSecond).toFixed(2)),
      capacity: {
        what: `${injectedPerSecond} trade messages/s injected on the Redis bus (${Math.round((injectedPerSecond * connections) / MARKETS.length)} deliveries/s offered), same subscribers`,
        keel: { runs: keelCapacity, median: capacitySummary(keelCapacity) },
        yardstick: { runs: floorCapacity, median: capacitySummary(floorCapacity) },
      },
      target: { messagesPerSecond: 100_000, lagP99Ms: 100 },
    };
  } finally {
    subscribers.stop();
    await stop();
    if (floor) await stopProcess(floor);
  }
}
