import autocannon from 'autocannon';
import { freshDatabase, keelCli, median, startKeelProcess, stopProcess } from './support';

async function call(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const res = await fetch(url, { method, headers: { ...headers, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * End-to-end `POST /v1/orderbook/orders` on the pro host, Keel in its own process with its own dev
 * chain: each answer comes after the order, its fills, trades and ledger moves are committed.
 * Two wallets funded through the faucet and the deposit watcher (the real path) trade one market:
 * limit orders of 0.01 ETH, buys at 1990–2005 and sells at 1995–2010 USDC, so about a third cross
 * and the rest rest. 50 connections; 1 warm-up and `runs` measured runs; medians reported.
 */
export async function run(args: string[]): Promise<object> {
  const seconds = Number(args[0] ?? 10);
  const runs = Number(args[1] ?? 3);
  const connections = Number(args[2] ?? 50);
  const core = 4920;
  const pro = 4921;
  const env = {
    DATABASE_URL: await freshDatabase('keel_bench_orders'),
    REDIS_PREFIX: 'keelbench:orders:',
    CORE_PORT: String(core),
    PRO_PORT: String(pro),
    HOST: '127.0.0.1',
    RATE_LIMIT_SCALE: '100000',
    DEV_CHAIN_IDS: '31398',
    DEV_CHAIN_PORT: '0',
    CHAIN_POLL_INTERVAL_MS: '100',
    KEEL_DATA_DIR: '.keel/bench-orders',
  };
  keelCli(['migrate'], env);
  const child = await startKeelProcess(env, `http://127.0.0.1:${pro}/ready`);
  try {
    const org = JSON.parse(keelCli(['org', 'create', '--name', 'bench', '--tier', 'Business', '--json'], env));
    const coreHeaders = { apiKey: org.adminKey, orgId: org.orgId };
    const proHeaders = { apiKey: org.proKey, orgId: org.orgId };
    const coreUrl = `http://127.0.0.1:${core}`;
    const proUrl = `http://127.0.0.1:${pro}`;
    const [chain] = (await call(`${coreUrl}/v1/blockchains`, 'GET', coreHeaders)).data;
    const assets = Object.fromEntries((await call(`${coreUrl}/v1/assets?blockchainId=${chain.id}`, 'GET', coreHeaders)).data.map((a: { symbol: string }) => [a.symbol, a]));
    await call(`${proUrl}/v1/orderbook/markets`, 'POST', { apiKey: org.proAdminKey, orgId: org.orgId }, { symbol: 'ETH-USDC', baseAssetId: assets.ETH.id, quoteAssetId: assets.USDC.id, tickSize: '0.01', lotSize: '0.001', minNotional: '1', makerFee: '0.001', takerFee: '0.002' });
    const buyer = (await call(`${coreUrl}/v1/master-wallets`, 'POST', coreHeaders, { blockchainId: chain.id, name: 'buyer' })).data;
    const seller = (await call(`${coreUrl}/v1/master-wallets`, 'POST', coreHeaders, { blockchainId: chain.id, name: 'seller' })).data;
    await call(`${coreUrl}/v1/dev/faucet`, 'POST', coreHeaders, { address: buyer.walletAddress, asset: 'USDC', amount: '1000000' });
    await call(`${coreUrl}/v1/dev/faucet`, 'POST', coreHeaders, { address: seller.walletAddress, asset: 'ETH', amount: '5000' });
    for (const [wallet, symbol] of [[buyer, 'USDC'], [seller, 'ETH']] as const) {
      for (;;) {
        const balances = (await call(`${proUrl}/v1/orderbook/wallets/${wallet.id}/balances`, 'GET', proHeaders)).data as { symbol: string; available: string }[];
        if (balances.some((b) => b.symbol === symbol && Number(b.available) > 0)) break;
        await new Promise((r) => setTimeout(r, 200));
      }
    }

    let n = 0;
    const nextOrder = () => {
      const buy = n++ % 2 === 0;
      const cents = Math.floor(Math.random() * 1500);
      return JSON.stringify({ walletId: buy ? buyer.id : seller.id, market: 'ETH-USDC', side: buy ? 'BUY' : 'SELL', type: 'LIMIT', price: ((buy ? 199_000 : 199_500) + cents) / 100 + '', quantity: '0.01', timeInForce: 'GTC' });
    };
    const results = [];
    for (let i = 0; i < runs + 1; i++) {
      const r = await autocannon({
        url: `${proUrl}/v1/orderbook/orders`,
        connections,
        duration: i === 0 ? 3 : seconds,
        requests: [{ method: 'POST', headers: { ...proHeaders, 'content-type': 'application/json' }, setupRequest: (req: object) => ({ ...req, body: nextOrder() }) }],
      });
      if (i === 0) continue;
      results.push({ ordersPerSecond: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors });
    }
    return {
      benchmark: 'orders',
      endpoint: 'POST /v1/orderbook/orders (pro host, committed before the answer)',
      connections,
      secondsPerRun: seconds,
      runs: results,
      median: { ordersPerSecond: median(results.map((r) => r.ordersPerSecond)), latencyP50Ms: median(results.map((r) => r.p50)), latencyP99Ms: median(results.map((r) => r.p99)) },
      target: { ordersPerSecond: 5000, latencyP99Ms: 25 },
    };
  } finally {
    await stopProcess(child);
  }
}
