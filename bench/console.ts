import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, Page } from 'playwright-core';
import { startKeel } from '../src/app';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';
import { onboardOrganization } from '../src/modules/api-keys/onboarding';
import { issueOperatorKey } from '../src/modules/api-keys/operator-key';
import { freshDatabase, median, ROOT } from './support';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Bytes the page received over the network (headers and bodies, as encoded on the wire), by CDP. */
async function countBytes(page: Page): Promise<() => number> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  let bytes = 0;
  cdp.on('Network.loadingFinished', (e: { encodedDataLength: number }) => (bytes += e.encodedDataLength));
  return () => bytes;
}

/**
 * The console in Debian's Chromium against one in-process Keel (all roles, its own dev chain):
 * - first load, cold cache: bytes transferred and the time from navigation start until the sign-in
 *   form takes input; then, signed in (token in sessionStorage), until the order-book page has drawn
 *   its depth and candle charts (GraphQL requests included);
 * - trade to chart: a resting SELL, then a crossing BUY through the API; from the BUY's answer (the
 *   trade is committed before it) until the candle chart on the open page shows the new volume,
 *   stamped in the page by a MutationObserver (browser and bench share the machine's clock); also
 *   from the moment the BUY was sent, an upper bound that includes the order's own round trip.
 * `npm run bench -- console [trades=30] [loads=5]`.
 */
export async function run(args: string[]): Promise<object> {
  const trades = Number(args[0] ?? 30);
  const loads = Number(args[1] ?? 5);
  if (!existsSync(join(ROOT, 'dist', 'console', 'index.html'))) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    await (require(join(ROOT, 'scripts', 'build-console.js')) as { buildConsole(): Promise<string> }).buildConsole();
  }
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: await freshDatabase('keel_bench_console'),
    REDIS_PREFIX: 'keelbench:console:',
    CORE_PORT: '0',
    PRO_PORT: '0',
    DEV_CHAIN_PORT: '0',
    RATE_LIMIT_SCALE: '1000',
  });
  // Its log goes to stderr: stdout carries the benchmark's JSON.
  const keel = await startKeel(config, createLogger('warn', process.stderr));
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
  try {
    const { db, services } = { db: keel.platform.db, services: keel.services };
    const proUrl = keel.pro!.url;
    const org = await onboardOrganization(db, services, { name: 'bench', tier: 'Business', proAccess: true });
    const chain = (await services.chains.listBlockchains({ limit: 1, offset: 0 })).items[0];
    const assets = Object.fromEntries((await services.chains.listAssets({ limit: 100, offset: 0, blockchainId: chain.id })).items.map((a) => [a.symbol, a]));
    const operator = await issueOperatorKey(services);
    const call = async (method: string, path: string, body: unknown, key: string, orgId: string) => {
      const res = await fetch(`${proUrl}${path}`, { method, headers: { apikey: key, orgid: orgId, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const json = (await res.json()) as { data: { id: string } };
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json.data;
    };
    await call('POST', '/v1/orderbook/markets', { symbol: 'ETH-USDC', baseAssetId: assets.ETH.id, quoteAssetId: assets.USDC.id, tickSize: '0.01', lotSize: '0.001', minNotional: '1', makerFee: '0.001', takerFee: '0.002' }, operator.key, operator.orgId);
    const core = async (path: string, body: unknown) => {
      const res = await fetch(`${keel.core!.url}${path}`, { method: 'POST', headers: { apikey: org.adminKey, orgid: org.orgId, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return ((await res.json()) as { data: { id: string } }).data;
    };
    const buyer = await core('/v1/master-wallets', { blockchainId: chain.id, name: 'Buyer' });
    const seller = await core('/v1/master-wallets', { blockchainId: chain.id, name: 'Seller' });
    await db.transaction(async (trx) => {
      await services.ledger.credit(trx, { organizationId: org.orgId, walletId: buyer.id, assetId: assets.USDC.id, amount: 10n ** 12n, reference: 'bench:usdc' });
      await services.ledger.credit(trx, { organizationId: org.orgId, walletId: seller.id, assetId: assets.ETH.id, amount: 10n ** 21n, reference: 'bench:eth' });
    });
    const order = (walletId: string, side: string) => call('POST', '/v1/orderbook/orders', { market: 'ETH-USDC', type: 'LIMIT', walletId, side, price: '2000', quantity: '0.01' }, org.proKey!, org.orgId);
    const token = await fetch(`${proUrl}/v1/orderbook/tokens`, { method: 'POST', headers: { apikey: org.proKey!, orgid: org.orgId, 'content-type': 'application/json' }, body: '{"ttlSeconds":3600}' }).then(async (r) => ((await r.json()) as { data: { token: string } }).data.token);
    // One trade first, so the candle chart exists before the measured ones.
    await order(seller.id, 'SELL');
    await order(buyer.id, 'BUY');

    // First load, each in a fresh context (cold cache).
    const signIn: { ms: number; bytes: number }[] = [];
    const signedIn: { ms: number; bytes: number }[] = [];
    for (let i = 0; i < loads; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const bytes = await countBytes(page);
      await page.goto(`${proUrl}/console`);
      await page.getByRole('textbox', { name: 'API key', exact: true }).waitFor();
      signIn.push({ ms: await page.evaluate<number>('performance.now()'), bytes: bytes() });
      await page.evaluate(`sessionStorage.setItem('keel.console.session', ${JSON.stringify(JSON.stringify({ host: 'pro', token, expiresAt: new Date(Date.now() + 3_600_000).toISOString(), organizationId: org.orgId, scopes: [] }))})`);
      // The same tab (sessionStorage is per tab), loaded again: bytes counted from here.
      const start = bytes();
      await page.goto(`${proUrl}/console?again#/markets`);
      await page.locator('[data-testid="candle-chart"] canvas').waitFor();
      await page.locator('[data-testid="depth-chart"] canvas').waitFor();
      signedIn.push({ ms: await page.evaluate<number>('performance.now()'), bytes: bytes() - start });
      await context.close();
    }

    // Trade to chart, on one signed-in page left open.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${proUrl}/console`);
    await page.evaluate(`sessionStorage.setItem('keel.console.session', ${JSON.stringify(JSON.stringify({ host: 'pro', token, expiresAt: new Date(Date.now() + 3_600_000).toISOString(), organizationId: org.orgId, scopes: [] }))})`);
    await page.goto(`${proUrl}/console?live#/markets`);
    await page.locator('[data-testid="candle-chart"][data-candles]').waitFor();
    const latencies: number[] = [];
    const fromSent: number[] = [];
    for (let i = 0; i < trades; i++) {
      await order(seller.id, 'SELL');
      const before = await page.getAttribute('[data-testid="candle-chart"]', 'data-volume');
      // Stamped in the page the moment the chart's data attribute changes.
      const shown = page.evaluate<number>(`new Promise((resolve) => {
        const chart = () => document.querySelector('[data-testid="candle-chart"]');
        const mo = new MutationObserver(() => {
          if (chart()?.getAttribute('data-volume') !== ${JSON.stringify(before)}) {
            mo.disconnect();
            resolve(Date.now());
          }
        });
        mo.observe(document.getElementById('app'), { attributes: true, subtree: true, childList: true });
      })`);
      // Settle the observer before the trade, then spread trades over the polling phase.
      await new Promise((r) => setTimeout(r, 50 + Math.random() * 400));
      const sent = Date.now();
      await order(buyer.id, 'BUY');
      const answered = Date.now();
      const at = await shown;
      fromSent.push(at - sent);
      latencies.push(at - answered);
    }
    await context.close();

    return {
      benchmark: 'console',
      liveMechanism: 'graphql-ws subscriptions: orderBook, trades, ticker, candles',
      // From the crossing order's answer (the trade committed before it; the chart may even be first: negative)
      // and, as an upper bound, from the moment the order was sent (its own round trip included).
      tradeToChart: {
        trades,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        minMs: Math.min(...latencies),
        maxMs: Math.max(...latencies),
        fromOrderSent: { p50Ms: percentile(fromSent, 50), p99Ms: percentile(fromSent, 99) },
      },
      firstLoad: {
        runs: loads,
        signInForm: { timeToInteractiveMs: Math.round(median(signIn.map((s) => s.ms))), bytesTransferred: median(signIn.map((s) => s.bytes)) },
        orderBookPageSignedIn: { timeToChartsMs: Math.round(median(signedIn.map((s) => s.ms))), bytesTransferred: median(signedIn.map((s) => s.bytes)) },
      },
    };
  } finally {
    await browser.close();
    await keel.stop();
  }
}
