import type { Browser, BrowserContext, Page } from 'playwright-core';
import { BookKeel, BookOrg, marketBody, units } from '../integration/orderbook/support';
import { WebhookReceiver } from '../support/webhook-receiver';
import { eventually } from '../support/eventually';
import { buildConsoleBundle, launchChromium, screenshot, seriousAxeViolations, watchedPage, WatchedPage } from './support';

/**
 * The built-in console driven in Debian's Chromium: it signs in, works the core host's pages
 * (organisation and keys, wallets with the dev faucet, deposits arriving live, approvals, webhooks)
 * and the order book's (markets with depth and candle charts and trades that move without a reload,
 * the caller's orders with cancel). Every page is screenshotted into test-artifacts/console/, checked
 * with axe-core and must leave no console error (a CSP refusal would be one).
 */
let k: BookKeel;
let org: BookOrg;
let trader: BookOrg;
let browser: Browser;
let context: BrowserContext;
let core: WatchedPage;
let walletA: string;
let walletB: string;
const receiver = new WebhookReceiver();
let hookUrl: string;

const coreUrl = () => k.keel.core!.url;
const proUrl = () => k.keel.pro!.url;

beforeAll(async () => {
  await buildConsoleBundle();
  hookUrl = await receiver.start();
  // An operator allowing tokens of half an hour at most: the console signs in all the same.
  k = await BookKeel.start({ CHAIN_POLL_INTERVAL_MS: 100, WEBHOOKS_ALLOW_PRIVATE_URLS: true, ACCESS_TOKEN_MAX_TTL_SECONDS: 1_800 });
  org = await k.createOrg();
  trader = await k.createOrg();
  const { ETH, USDC } = await k.assets();
  expect((await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', ETH, USDC))).status).toBe(201);
  walletA = await k.wallet(org, 'Buyer');
  walletB = await k.wallet(trader, 'Seller');
  await k.credit(org, walletA, USDC.id, units('100000', USDC.decimals));
  await k.credit(trader, walletB, ETH.id, units('100', ETH.decimals));
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(15_000);
  context.on('dialog', (d) => d.accept());
  core = await watchedPage(context);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await k?.stop();
  await receiver.stop();
});

afterEach(() => {
  expect(core.problems).toEqual([]);
});

/** Marks the document; a reload would lose the mark. */
const markDocument = (page: Page) => page.evaluate('window.keelMark = 1');
const stillSameDocument = (page: Page) => page.evaluate('window.keelMark === 1');

async function checkPage(page: Page, name: string): Promise<void> {
  await screenshot(page, name);
  expect(await seriousAxeViolations(page)).toEqual([]);
}

async function signInWithKey(page: Page, url: string, key: string, orgId: string): Promise<void> {
  await page.goto(`${url}/console`);
  // By keyboard: the key field, then the organisation, then Enter submits.
  await page.getByRole('textbox', { name: 'API key', exact: true }).focus();
  await page.keyboard.type(key);
  await page.keyboard.press('Tab');
  await page.keyboard.type(orgId);
  await page.keyboard.press('Enter');
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
}

describe('the console on the core host', () => {
  test('is one static page under a strict Content-Security-Policy, served without credentials', async () => {
    const res = await fetch(`${coreUrl()}/console`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain(`connect-src 'self' ws://${new URL(coreUrl()).host} wss://${new URL(coreUrl()).host};`);
    expect(csp).toContain("default-src 'none'");
    const body = await res.text();
    expect(body).toContain('<meta name="keel-host" content="core">');
    expect(body).not.toMatch(/<script>|<style|https?:\/\//);
    const script = await fetch(`${coreUrl()}/console/app.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('content-encoding')).toBe('gzip');
    expect(await script.text()).toContain('createAccessToken');
    expect((await fetch(`${proUrl()}/console`)).status).toBe(200);
  });

  test("signs in with a key (keyboard only), keeping a token of the host's default lifetime where an hour is more than it allows and never the key", async () => {
    await signInWithKey(core.page, coreUrl(), org.adminKey, org.orgId);
    await core.page.getByRole('heading', { name: 'Organisation and keys', level: 2 }).waitFor();
    await core.page.getByText(org.orgId).waitFor();
    const stored = await core.page.evaluate<string>('JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage })');
    expect(stored).not.toContain(org.adminKey);
    const session = JSON.parse(await core.page.evaluate<string>("sessionStorage.getItem('keel.console.session')"));
    expect(session).toMatchObject({ host: 'core', organizationId: org.orgId, token: expect.stringMatching(/^eyJ/) });
    // This host allows half an hour at most: the hour the console asks for is refused, and it takes ACCESS_TOKEN_DEFAULT_TTL_SECONDS (900).
    expect((Date.parse(session.expiresAt) - Date.now()) / 1000).toBeGreaterThan(800);
    expect((Date.parse(session.expiresAt) - Date.now()) / 1000).toBeLessThanOrEqual(900);
    await core.page.getByTestId('live-status').getByText('Live').waitFor();
    await checkPage(core.page, 'core-organization');
  });

  test('creates an API key and shows its secret once; the keyboard reaches the pages', async () => {
    const { page } = core;
    // Without the admin key the console's token is refused: key administration needs the key itself.
    await page.getByLabel('Name', { exact: true }).fill('Console-made key');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('alert').getByText(/admin key|API key/i).waitFor();
    await page.getByLabel('Admin API key').fill(org.adminKey);
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByTestId('secret').textContent();
    expect(secret!.length).toBeGreaterThan(20);
    await checkPage(page, 'core-key-secret');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('cell', { name: 'Console-made key', exact: true }).waitFor();
    expect(await page.getByTestId('secret').count()).toBe(0);

    // After a reload (still signed in: the token is in sessionStorage), Tab from the top reaches the page links.
    await page.reload();
    await page.getByRole('navigation', { name: 'Pages' }).waitFor();
    const focused: string[] = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Tab');
      focused.push(await page.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''"));
    }
    expect(focused).toContain('Wallets');
    await page.getByRole('link', { name: 'Wallets' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Master wallets' }).waitFor();
  });

  test('creates a wallet, funds it with the dev faucet and sees the deposit appear without a reload', async () => {
    const { page } = core;
    await markDocument(page);
    await page.getByLabel('Name', { exact: true }).fill('Console treasury');
    await page.getByRole('button', { name: 'Create wallet' }).click();
    await page.getByRole('heading', { name: 'Wallet “Console treasury”' }).waitFor();
    await page.getByLabel('Amount').fill('0.25');
    await page.getByRole('button', { name: 'Fund this wallet' }).click();
    const sent = page.getByText(/^Sent 0\.25 ETH/);
    await sent.waitFor();
    const txHash = (await sent.locator('code').textContent())!;
    await checkPage(page, 'core-wallets');

    await page.getByRole('link', { name: 'Deposits and withdrawals' }).click();
    await page.getByRole('heading', { name: 'Deposits and withdrawals' }).waitFor();
    // Nothing is reloaded or re-navigated: the events subscription brings the confirmed deposit.
    await page.locator(`tr[data-hash="${txHash}"]`).waitFor({ timeout: 30_000 });
    await page.locator(`tr[data-hash="${txHash}"]`).getByText('0.25 ETH').waitFor();
    expect(await stillSameDocument(page)).toBe(true);
    await page.getByRole('complementary', { name: 'Latest events' }).getByText('master.incoming_transfer').first().waitFor();

    // With the page open (it does not poll), a second faucet payment appears as soon as Keel commits it.
    const rows = page.getByRole('table', { name: 'Deposits to Console treasury' }).locator('tr[data-hash]');
    expect(await rows.count()).toBe(1);
    const wallet = (await org.core().get('/v1/master-wallets')).body.data.find((w: { name: string }) => w.name === 'Console treasury');
    const second = await org.core().post('/v1/dev/faucet', { blockchainId: wallet.blockchainId, address: wallet.walletAddress, asset: 'USDC', amount: '12.5' });
    expect(second.status).toBe(200);
    await page.locator(`tr[data-hash="${second.body.data.txHash}"]`).getByText('12.5 USDC').waitFor({ timeout: 30_000 });
    expect(await rows.count()).toBe(2);
    expect(await stillSameDocument(page)).toBe(true);
    await checkPage(page, 'core-activity');
  });

  test('approves one held transfer another key asked for, and rejects another', async () => {
    const { page } = core;
    const { ETH, USDC } = await k.assets();
    const made = await org.core().post('/v1/master-wallets', { blockchainId: ETH.blockchainId, name: 'Guarded', configurations: { security: { requireApprovalForTransfers: true } } });
    expect(made.status).toBe(201);
    const guarded = made.body.data;
    expect((await org.core().post('/v1/dev/faucet', { blockchainId: ETH.blockchainId, address: guarded.walletAddress, asset: 'USDC', amount: '20' })).status).toBe(200);
    expect((await org.core().post('/v1/dev/faucet', { blockchainId: ETH.blockchainId, address: guarded.walletAddress, amount: '0.1' })).status).toBe(200);
    const recipient = '0x000000000000000000000000000000000000dEaD';
    // Asked for by a colleague's key: the console's own key (the admin's) could not approve its own request.
    const clerk = org.core().with({ apiKey: (await org.core().post('/v1/api-keys', { name: 'clerk', scopes: ['read', 'write'] })).body.data.secret, orgId: org.orgId });
    // Spendable once the deposit is confirmed.
    const send = (amount: string) => clerk.post(`/v1/master-wallets/${guarded.id}/transfer`, { assets: [{ assetId: USDC.id, recipient, amount }] });
    let last: unknown;
    const first = await eventually(async () => {
      const res = await send('3');
      last = res.body;
      return res.status === 201 && res.body.data;
    }, 30_000, 250).catch((e) => {
      throw new Error(`${e.message}: ${JSON.stringify(last)}`);
    });
    const second = (await send('4')).body.data;
    expect([first.status, second.status]).toEqual(['PENDING_APPROVAL', 'PENDING_APPROVAL']);

    await page.getByRole('link', { name: 'Approvals' }).click();
    const rows = page.getByRole('table', { name: 'Transfers waiting for approval' });
    await rows.locator(`tr[data-transfer-id="${first.id}"]`).getByText('3 USDC', { exact: false }).waitFor();
    await rows.locator(`tr[data-transfer-id="${second.id}"]`).waitFor();
    await checkPage(page, 'core-approvals');
    await rows.locator(`tr[data-transfer-id="${first.id}"]`).getByRole('button', { name: /Approve transfer/ }).click();
    await rows.locator(`tr[data-transfer-id="${first.id}"]`).waitFor({ state: 'detached' });
    await rows.locator(`tr[data-transfer-id="${second.id}"]`).getByRole('button', { name: /Reject transfer/ }).click();
    await rows.locator(`tr[data-transfer-id="${second.id}"]`).waitFor({ state: 'detached' });
    expect((await org.core().get(`/v1/transfers/${first.id}`)).body.data.status).not.toBe('PENDING_APPROVAL');
    expect((await org.core().get(`/v1/transfers/${first.id}`)).body.data.decidedAt).toEqual(expect.any(String));
    expect((await org.core().get(`/v1/transfers/${second.id}`)).body.data.status).toBe('REJECTED');
  });

  test('creates a webhook subscription, shows its delivery log and resends a delivery', async () => {
    const { page } = core;
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Console hook');
    await page.getByLabel('URL').fill(hookUrl);
    await page.getByLabel('Event types (comma-separated)').fill('master.created');
    await page.getByRole('button', { name: 'Create webhook' }).click();
    expect((await page.getByTestId('secret').textContent())!.length).toBeGreaterThan(20);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('cell', { name: 'Console hook', exact: true }).waitFor();

    expect((await org.core().post('/v1/master-wallets', { blockchainId: (await k.assets()).ETH.blockchainId, name: 'Hooked' })).status).toBe(201);
    const row = page.getByRole('table', { name: 'Delivery log' }).locator('tr[data-delivery-id]').first();
    await row.getByText('SUCCESS').waitFor();
    const eventId = await row.getAttribute('data-event-id');
    expect(receiver.eventIds()).toEqual([eventId]);
    await row.getByRole('button', { name: /Resend delivery/ }).click();
    await eventually(() => receiver.eventIds().length === 2);
    expect(receiver.eventIds()).toEqual([eventId, eventId]);
    await checkPage(page, 'core-webhooks');
  });
});

describe('the order-book console on the pro host', () => {
  let pro: WatchedPage;
  beforeAll(async () => {
    pro = await watchedPage(context);
  });
  afterEach(() => {
    expect(pro.problems).toEqual([]);
  });

  const place = (who: BookOrg, walletId: string, side: 'BUY' | 'SELL', price: string, quantity: string) =>
    who
      .pro()
      .post('/v1/orderbook/orders', { market: 'ETH-USDC', type: 'LIMIT', walletId, side, price, quantity })
      .then((r) => {
        expect(r.status).toBe(201);
        return r.body.data as { id: string; status: string };
      });

  test('shows the market; two crossing orders move the depth chart, the trades and the candles without a reload', async () => {
    const { page } = pro;
    await signInWithKey(page, proUrl(), org.proKey!, org.orgId);
    const depth = page.getByTestId('depth-chart');
    const candles = page.getByTestId('candle-chart');
    await depth.waitFor();
    expect(await depth.getAttribute('data-asks')).toBe('0');
    expect(await candles.getAttribute('data-candles')).toBe('0');
    await page.getByTestId('live-status').getByText('Live').waitFor();
    await markDocument(page);
    // From here the page learns everything over graphql-ws: no HTTP request at all.
    const httpRequests: string[] = [];
    page.on('request', (r) => httpRequests.push(r.url()));

    const sell = await place(trader, walletB, 'SELL', '2000', '1.5');
    await page.locator('[data-testid="depth-chart"][data-asks="1"]').waitFor();
    const buy = await place(org, walletA, 'BUY', '2001', '1');
    expect(buy.status).toBe('FILLED');
    expect(sell.status).toBe('OPEN');

    await page.locator('[data-testid="candle-chart"][data-candles="1"][data-last-close="2000"][data-volume="1"]').waitFor();
    await page.getByRole('table', { name: 'Recent trades' }).getByRole('cell', { name: '2000' }).waitFor();
    await page.getByTestId('last-price').getByText('2000').waitFor();
    expect(await depth.getAttribute('data-asks')).toBe('1');
    expect(await stillSameDocument(page)).toBe(true);
    expect(httpRequests).toEqual([]);
    await checkPage(page, 'pro-markets');
  });

  test("lists the caller's orders, cancels one and places one from the form", async () => {
    const { page } = pro;
    const resting = await place(org, walletA, 'BUY', '1500', '0.5');
    await page.getByRole('link', { name: 'My orders' }).click();
    const row = page.locator(`tr[data-order-id="${resting.id}"]`);
    await row.getByText('OPEN').waitFor();
    await row.getByRole('button', { name: /Cancel order/ }).click();
    await row.getByText('CANCELLED').waitFor();
    const res = await org.pro().get(`/v1/orderbook/orders/${resting.id}`);
    expect(res.body.data.status).toBe('CANCELLED');

    // An order placed from the console's form arrives in the list over the orders subscription.
    await page.getByLabel('Market', { exact: true }).fill('ETH-USDC');
    await page.getByLabel('Wallet id').fill(walletA);
    await page.getByLabel('Side').selectOption('BUY');
    await page.getByLabel('Price').fill('1400');
    await page.getByLabel('Quantity').fill('0.25');
    await page.getByRole('button', { name: 'Place order' }).click();
    const placed = await eventually(async () => (await org.pro().get('/v1/orderbook/orders?status=OPEN')).body.data.find((o: { price: string }) => o.price === '1400'));
    await page.locator(`tr[data-order-id="${placed.id}"]`).getByText('OPEN').waitFor();
    await checkPage(page, 'pro-orders');
  });
});

describe('a session', () => {
  test("ends when its key is revoked: the console signs out and says why", async () => {
    const made = await org.core().post('/v1/api-keys', { name: 'short-lived', scopes: ['read'] });
    expect(made.status).toBe(201);
    const other = await browser.newContext();
    try {
      // Not a watched page: the refused request is logged by the browser as an error, by design.
      const page = await other.newPage();
      await signInWithKey(page, coreUrl(), made.body.data.secret, org.orgId);
      await page.getByTestId('live-status').getByText('Live').waitFor();
      expect((await org.core().request('DELETE', `/v1/api-keys/${made.body.data.id}`)).status).toBe(200);
      // Keel closes the live connection at once (4401, with the reason): the console signs out.
      await page.getByRole('alert').getByText(/revoked|invalid|token/i).waitFor();
      await page.getByRole('textbox', { name: 'API key', exact: true }).waitFor();
      expect(await page.evaluate<string | null>("sessionStorage.getItem('keel.console.session')")).toBeNull();
    } finally {
      await other.close();
    }
  });
});

describe('on a phone-sized screen', () => {
  test('signs in with a token minted by a server and stays readable', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      const minted = await org.core().post('/v1/tokens', { scopes: ['read'], ttlSeconds: 600 });
      expect(minted.status).toBe(201);
      const w = await watchedPage(phone);
      await w.page.goto(`${coreUrl()}/console#/wallets`);
      await w.page.getByLabel('an access token').check();
      await w.page.getByRole('textbox', { name: 'Access token', exact: true }).fill(minted.body.data.token);
      await w.page.getByRole('button', { name: 'Sign in' }).click();
      await w.page.getByRole('cell', { name: 'Console treasury', exact: true }).waitFor();
      await checkPage(w.page, 'phone-core-wallets');
      // Nothing wider than the phone: long tables scroll inside their own box.
      expect(await w.page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      const p = await watchedPage(phone);
      await signInWithKey(p.page, proUrl(), org.proKey!, org.orgId);
      await p.page.getByTestId('candle-chart').waitFor();
      await checkPage(p.page, 'phone-pro-markets');
      expect(await p.page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      expect([...w.problems, ...p.problems]).toEqual([]);
    } finally {
      await phone.close();
    }
  });
});
