import { mkdirSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, Browser, Page } from 'playwright-core';
import { ethers } from 'ethers';
import { mine, mineTo, revert, snapshot } from '../../support/chain-controls';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { eventually } from '../../support/eventually';
import { fundFromFaucet } from '../../../src/platform/chain/faucet';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { PAYMENT_CONFIG } from './support';
import { ApiClient } from '../../support/api-client';

const ARTIFACTS = join(__dirname, '../../../test-artifacts/checkout-page');
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** A phone-sized viewport. */
const PHONE = { width: 390, height: 844 };

/**
 * The hosted checkout page in Debian's Chromium (playwright-core, nothing downloaded), on a dev
 * chain of the test's own that mines only when told to, so every state the page shows is reached
 * on purpose: waiting, detected (the payment is in the head block), confirmed (recorded at the
 * chain's 2 confirmations), paid (the payment's 4 confirmations), then the redirect; and expired.
 */
describe('the hosted checkout page in a real browser', () => {
  let own: OwnChainKeel;
  let browser: Browser;
  let shop: Server;
  let shopUrl: string;
  const problems: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    own = await startKeelOnOwnChain(31_418, 2, { ...PAYMENT_CONFIG, PAYMENT_CONFIRMATIONS: 4 });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    shop = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Shop</title><h1>Thank you for your order</h1>'));
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}/thanks`;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => shop?.close(resolve));
    await own?.stop();
  });

  async function openPage(slug: string): Promise<Page> {
    const page = await browser.newPage({ viewport: PHONE });
    page.on('console', (msg) => msg.type() === 'error' && problems.push(`console: ${msg.text()} ${msg.location().url}`));
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('response', (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
    const response = await page.goto(`${own.t.coreUrl}/pay/${slug}`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    return page;
  }

  async function state(page: Page, name: string, shot: string): Promise<void> {
    await page.locator(`#status[data-state="${name}"]`).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(ARTIFACTS, `${shot}.png`), fullPage: true });
  }

  test('a payer picks USDC, pays the address shown, and watches the page reach paid and redirect', async () => {
    const { org, blockchainId, chain } = own;
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId, name: 'Shop' })).body.data;
    await org.core.post('/v1/dev/faucet', { blockchainId, address: wallet.walletAddress, amount: '2' });
    const link = (await org.core.post('/v1/payment/links', { name: 'Espresso machine', description: 'Model K, delivered in 3 days', currency: 'USD', amount: '7.25', evmSettlementWalletId: wallet.id, redirectUrl: shopUrl, successMessage: 'Payment received, thank you!' })).body.data;
    const soon = (await org.core.post('/v1/payment/links', { name: 'Last-minute deal', currency: 'USD', amount: '1', evmSettlementWalletId: wallet.id, expiresAt: new Date(Date.now() + 20_000).toISOString() })).body.data;

    // A second payer starts a session on a link about to expire and never pays.
    const idle = await openPage(soon.slug);
    await idle.locator('#choose').waitFor();
    await idle.getByRole('button', { name: 'Continue to payment' }).click();
    await state(idle, 'waiting', '0-other-session-waiting');

    const page = await openPage(link.slug);
    await page.locator('#choose').waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Espresso machine');
    expect(await page.locator('#link-amount').textContent()).toBe('7.25 USD');
    await page.getByLabel('Network').selectOption(blockchainId);
    await page.getByLabel('Asset').selectOption(own.assets.USDC.id);
    await page.screenshot({ path: join(ARTIFACTS, '1-choose.png'), fullPage: true });
    // Keyboard only: the button is reachable and works with Enter.
    const qrCode = page.waitForResponse((r) => r.url().endsWith('/qr.svg'));
    await page.getByRole('button', { name: 'Continue to payment' }).focus();
    await page.keyboard.press('Enter');

    await state(page, 'waiting', '2-waiting');
    const address = await page.getByLabel('To this address').inputValue();
    expect(address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(await page.locator('#pay-amount').textContent()).toBe('7.25');
    expect(await page.locator('#pay-asset').textContent()).toBe('USDC');
    // The QR code is drawn by the server, as SVG, and shown.
    expect((await qrCode).headers()['content-type']).toContain('image/svg+xml');
    expect(await page.locator('#qr').isVisible()).toBe(true);
    expect(await page.locator('#countdown').textContent()).toMatch(/^1[45]:\d\d$/);
    expect(page.url()).toContain('?session=');

    // Pay the address the page shows from a funded dev account (the dev faucet): mined at once.
    const paid = await org.core.post('/v1/dev/faucet', { blockchainId, address, asset: 'USDC', amount: '7.25' });
    expect(paid.status).toBe(200);
    await state(page, 'detected', '3-detected');
    await mine(chain.rpcUrl, 1);
    await state(page, 'confirmed', '4-confirmed');
    expect(await page.locator('#status').textContent()).toContain('(2 of 4 confirmations)');
    await mine(chain.rpcUrl, 2);
    await state(page, 'paid', '5-paid');
    expect(await page.locator('#message').textContent()).toBe('Payment received, thank you!');
    await page.waitForURL(shopUrl, { timeout: 10_000 });
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Thank you for your order');
    await page.screenshot({ path: join(ARTIFACTS, '6-redirected.png'), fullPage: true });

    // The other session expired on its own page, without a reload.
    await eventually(async () => (await idle.locator('#status').getAttribute('data-state')) === 'expired', 20_000, 200);
    await state(idle, 'expired', '7-expired');
    expect(await idle.locator('#payment-details').isHidden()).toBe(true);

    const transfers = (await org.core.get(`/v1/payment/links/${link.id}/transfers`)).body.data;
    expect(transfers).toMatchObject([{ kind: 'PAYMENT', status: 'CONFIRMED', txHash: paid.body.data.txHash, amount: '7.25' }]);
    expect(problems).toEqual([]);
  }, 120_000);

  test("a page never shows another link's session: another merchant's session under this link's slug is 404 and the page offers its own checkout; a session answered for another slug is not shown either", async () => {
    const { org, blockchainId, t } = own;
    const otherOrg = await t.createOrg();
    const mine = (await org.core.post('/v1/master-wallets', { blockchainId, name: 'Honest shop' })).body.data;
    const theirs = (await otherOrg.core.post('/v1/master-wallets', { blockchainId, name: 'Other shop' })).body.data;
    const linkA = (await org.core.post('/v1/payment/links', { name: 'Honest shop', currency: 'USD', amount: '5', evmSettlementWalletId: mine.id })).body.data;
    const linkB = (await otherOrg.core.post('/v1/payment/links', { name: 'Other shop', currency: 'USD', amount: '99.99', evmSettlementWalletId: theirs.id, redirectUrl: shopUrl })).body.data;
    const sessionB = (await new ApiClient(t.coreUrl, {}).post(`/v1/checkout/links/${linkB.slug}/sessions`, { blockchainId, assetId: own.assets.USDC.id })).body.data;

    const open = async (url: string) => {
      const page = await browser.newPage({ viewport: PHONE });
      const requested: string[] = [];
      page.on('request', (r) => requested.push(r.url()));
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      const response = await page.goto(url);
      return { page, requested, status: response?.status() };
    };
    /** What the payer of link A must never see of link B's session. */
    const showsNothingOf = async (page: Page, requested: string[]) => {
      await page.locator('#choose').waitFor();
      expect(await page.locator('#error').textContent()).toBe('This payment session is not one of this payment link.');
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Honest shop');
      expect(await page.locator('#link-amount').textContent()).toBe('5 USD');
      expect(await page.locator('#pay').isHidden()).toBe(true);
      const html = await page.content();
      for (const leak of [sessionB.depositAddress, '99.99', linkB.slug, shopUrl]) expect(html).not.toContain(leak);
      expect(requested.filter((u) => u.endsWith('/qr.svg'))).toEqual([]);
      expect(page.url()).not.toContain('session=');
    };

    // The server refuses it: the page is 404 and its script's read under link A's slug is 404.
    const refused = await open(`${t.coreUrl}/pay/${linkA.slug}?session=${sessionB.id}`);
    expect(refused.status).toBe(404);
    await showsNothingOf(refused.page, refused.requested);
    // Its script asked for the session once, under link A's slug only.
    expect(refused.requested.filter((u) => u.includes('/v1/') && u.includes(sessionB.id))).toEqual([`${t.coreUrl}/v1/checkout/links/${linkA.slug}/sessions/${sessionB.id}`]);
    await refused.page.screenshot({ path: join(ARTIFACTS, '8-foreign-session-refused.png'), fullPage: true });

    // The page checks it too: even answered with link B's session (a stale cache, a proxy that
    // rewrote the path), it shows nothing of it.
    const answered = (await new ApiClient(t.coreUrl, {}).get(`/v1/checkout/links/${linkB.slug}/sessions/${sessionB.id}`)).body;
    const page = await browser.newPage({ viewport: PHONE });
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    await page.route(`**/v1/checkout/links/${linkA.slug}/sessions/${sessionB.id}`, (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(answered) }));
    await page.goto(`${t.coreUrl}/pay/${linkA.slug}?session=${sessionB.id}`);
    await showsNothingOf(page, requested);

    // Link B's own page still shows its payer the session.
    const theirsPage = await open(`${t.coreUrl}/pay/${linkB.slug}?session=${sessionB.id}`);
    expect(theirsPage.status).toBe(200);
    await state(theirsPage.page, 'waiting', '9-own-session');
    expect(await theirsPage.page.getByLabel('To this address').inputValue()).toBe(sessionB.depositAddress);
    expect(problems).toEqual([]);
  }, 60_000);

  test("a reload refused for a while (the session-read allowance used up behind a shared address) keeps the session: the page says it is retrying, waits as the 429 says, then shows the session", async () => {
    const { org, blockchainId, t } = own;
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId, name: 'Busy shop' })).body.data;
    const link = (await org.core.post('/v1/payment/links', { name: 'Busy shop', currency: 'USD', amount: '3', evmSettlementWalletId: wallet.id })).body.data;
    const session = (await new ApiClient(t.coreUrl, {}).post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId, assetId: own.assets.USDC.id })).body.data;

    // Every read of this address's allowance is spent for the next 4 seconds (others behind the same carrier NAT polling).
    const reads = `${t.config.REDIS_PREFIX}rl:client:checkout-read:m:127.0.0.1`;
    await t.keel.platform.redis.set(reads, String(t.config.CHECKOUT_SESSION_READS_PER_MINUTE), { PX: 4_000 });

    const page = await browser.newPage({ viewport: PHONE });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    const refused = page.waitForResponse((r) => r.url().endsWith(`/sessions/${session.id}`) && r.status() === 429);
    await page.goto(`${t.coreUrl}/pay/${link.slug}?session=${session.id}`);
    await refused;
    // Not taken for another link's session: no fresh checkout offered, the session kept in the URL.
    await page.locator('#retrying:visible, #choose:visible').first().waitFor();
    expect(page.url()).toContain(`session=${session.id}`);
    expect(await page.locator('#choose').isHidden()).toBe(true);
    expect(await page.locator('#retrying').textContent()).toMatch(/^Too many requests from your network; retrying in [1-5] s\. Your payment session is kept\.$/);
    expect(await page.locator('#error').isHidden()).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, '10-session-read-retrying.png'), fullPage: true });

    // Once the allowance is back the page shows the session it was asked for, still in its URL.
    await state(page, 'waiting', '11-session-read-resumed');
    expect(await page.getByLabel('To this address').inputValue()).toBe(session.depositAddress);
    expect(await page.locator('#retrying').isHidden()).toBe(true);
    expect(page.url()).toContain(`session=${session.id}`);
    expect(problems).toEqual([]);
  }, 60_000);

  test('a reorg that drops a confirming payment reverts the payment-link transfer and reopens the checkout; paying again completes it', async () => {
    const { org, blockchainId, chain, t } = own;
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId, name: 'Reorg shop' })).body.data;
    const link = (await org.core.post('/v1/payment/links', { name: 'Reorg-proof', currency: 'USD', amount: '4', evmSettlementWalletId: wallet.id })).body.data;
    const session = (await new ApiClient(t.coreUrl, {}).post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId, assetId: own.assets.USDC.id })).body.data;
    const sessionOf = async () => (await new ApiClient(t.coreUrl, {}).get(`/v1/checkout/links/${link.slug}/sessions/${session.id}`)).body.data;
    const transfersOf = async () => (await org.core.get(`/v1/payment/links/${link.id}/transfers`)).body.data;

    const before = await snapshot(chain.rpcUrl);
    await org.core.post('/v1/dev/faucet', { blockchainId, address: session.depositAddress, asset: 'USDC', amount: '4' });
    await mine(chain.rpcUrl, 1);
    await eventually(async () => (await sessionOf()).status === 'CONFIRMING');
    // At least the two blocks mined here; another transaction of the chain (a sweep left from the
    // test before) may have mined one more, but not the fourth.
    const confirming = await transfersOf();
    expect(confirming).toMatchObject([{ status: 'CONFIRMING', requiredConfirmations: 4 }]);
    expect(confirming[0].confirmations).toBeGreaterThanOrEqual(2);
    expect(confirming[0].confirmations).toBeLessThan(4);

    // Another fork from before the payment, longer than the old one.
    await revert(chain.rpcUrl, before);
    await fundFromFaucet(chain.rpcUrl, devChainAccount(0).privateKey, { to: devChainAccount(7).address, amount: '1' });
    await mine(chain.rpcUrl, 3);
    await eventually(async () => (await transfersOf())[0]?.status === 'REVERTED', 20_000, 100);
    expect(await sessionOf()).toMatchObject({ status: 'AWAITING_PAYMENT', amountReceived: '0', amountConfirming: '0' });
    const reported = (await t.keel.platform.db('outbox_events').where({ type: 'payment_link_transfer.updated' }).orderBy('sequence').select('envelope'))
      .map((r: { envelope: any }) => (typeof r.envelope === 'string' ? JSON.parse(r.envelope) : r.envelope).data)
      .filter((d: any) => d.paymentLinkId === link.id);
    // Never reported confirmed; reverted last. (A block mined by other work before the revert may
    // have reported one more confirmation, still CONFIRMING.)
    expect(reported.map((d: any) => d.status).filter((s: string) => s !== 'CONFIRMING')).toEqual(['REVERTED']);
    expect(reported[reported.length - 1].status).toBe('REVERTED');

    await org.core.post('/v1/dev/faucet', { blockchainId, address: session.depositAddress, asset: 'USDC', amount: '4' });
    await mine(chain.rpcUrl, 3);
    await eventually(async () => (await sessionOf()).status === 'PAID', 20_000, 100);
    expect((await transfersOf()).map((x: any) => x.status).sort()).toEqual(['CONFIRMED', 'REVERTED']);
    expect((await org.core.get(`/v1/payment/links/${link.id}`)).body.data.paymentsConsumed).toBe(1);
  }, 60_000);

  test('a payment a reorg reverts and the new fork includes again is the same payment-link transfer, reported created once', async () => {
    const { org, blockchainId, chain, t } = own;
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId, name: 'Fork shop' })).body.data;
    const link = (await org.core.post('/v1/payment/links', { name: 'Fork-proof', currency: 'USD', amount: '3', evmSettlementWalletId: wallet.id })).body.data;
    const session = (await new ApiClient(t.coreUrl, {}).post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId, assetId: own.assets.USDC.id })).body.data;
    const transfersOf = async () => (await org.core.get(`/v1/payment/links/${link.id}/transfers`)).body.data;
    const provider = new ethers.JsonRpcProvider(chain.rpcUrl, undefined, { staticNetwork: true });

    const before = await snapshot(chain.rpcUrl);
    const paid = (await org.core.post('/v1/dev/faucet', { blockchainId, address: session.depositAddress, asset: 'USDC', amount: '3' })).body.data.txHash;
    const signed = ethers.Transaction.from((await provider.getTransaction(paid))!).serialized;
    await mine(chain.rpcUrl, 1);
    await eventually(async () => (await transfersOf())[0]?.status === 'CONFIRMING', 20_000, 100);
    const oldHead = await provider.getBlockNumber();

    // Another fork from before the payment: another block first, then the same signed payment, then
    // past the old head (one block a call after the revert).
    await revert(chain.rpcUrl, before);
    await fundFromFaucet(chain.rpcUrl, devChainAccount(1).privateKey, { to: devChainAccount(7).address, amount: '1' });
    expect(await provider.send('eth_sendRawTransaction', [signed])).toBe(paid);
    await mineTo(chain.rpcUrl, oldHead + 1);
    // Reverted, then recorded again on the new fork: the same transfer, confirming again, then paid.
    const updates = async () =>
      (await t.keel.platform.db('outbox_events').whereIn('type', ['payment_link_transfer.created', 'payment_link_transfer.updated']).orderBy('sequence').select('envelope'))
        .map((r: { envelope: any }) => (typeof r.envelope === 'string' ? JSON.parse(r.envelope) : r.envelope))
        .filter((e: any) => e.data.paymentLinkId === link.id);
    await eventually(async () => (await updates()).some((e: any, i: number, all: any[]) => all.slice(0, i).some((p: any) => p.data.status === 'REVERTED') && e.data.status !== 'REVERTED'), 20_000, 100);
    await mine(chain.rpcUrl, 4);
    await eventually(async () => (await transfersOf())[0]?.status === 'CONFIRMED', 20_000, 100);
    expect(await transfersOf()).toMatchObject([{ txHash: paid, kind: 'PAYMENT', status: 'CONFIRMED' }]);
    const reported = await updates();
    expect(reported.filter((e: any) => e.type === 'payment_link_transfer.created')).toHaveLength(1);
    expect(new Set(reported.map((e: any) => e.data.id)).size).toBe(1);
    expect(reported.map((e: any) => e.data.status)).toContain('REVERTED');
  }, 60_000);
});
