/**
 * Payment links on Solana (issue 35): a link with a solanaSettlementWalletId is paid in USDC on
 * Keel's sandbox Solana network through the hosted page in Debian's Chromium (the page shows the
 * Solana Pay request and its QR code; the payer pays the address shown and the page turns paid);
 * a payment in another mint is not counted; an underpayment stays UNDERPAID past the expiry and a
 * payment after it is LATE; a repeat payment is a REPEAT; another organisation's wallet is 404 and
 * an EVM wallet as the Solana one is 400 INVALID_NETWORK; an expired checkout's address is retired
 * after the late-payment grace (the time of the slots scanned read through the chain port); an
 * amount beyond u64 (what one SOL or SPL transfer carries) is refused for an intent, a link's fixed
 * amount and a payer's own, where an EVM asset takes it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, Browser, Page } from 'playwright-core';
import { Address, createSolanaRpc } from '@solana/kit';
import { SolanaDevnet, startSolanaDevnet } from '../../../src/platform/solana-devnet/devnet';
import { DEVNET_MINTS } from '../../../src/platform/solana-devnet/genesis';
import { formatChainsConfig, parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { devSolanaSpec } from '../../../src/modules/chains/chain-networks';
import { qrSvg } from '../../../src/modules/checkout';
import { startTestKeel, TestKeel } from '../../support/keel';
import { eventually } from '../../support/eventually';
import { merchant, Merchant, PAYMENT_CONFIG, publicClient, sessionPath, sessionReaches } from './support';

jest.setTimeout(120_000);

const ARTIFACTS = join(__dirname, '../../../test-artifacts/solana-checkout');
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const USDC = DEVNET_MINTS.find((m) => m.symbol === 'USDC')!;
/** The late-payment grace: a checkout's address is retired once its expiry plus this has passed in the slots scanned. */
const GRACE_SECONDS = 10;

let devnet: SolanaDevnet;
let t: TestKeel;
let browser: Browser;
let shop: Merchant;
let solanaId: string;
let solanaWallet: { id: string; walletAddress: string };
let usdc: { id: string; address: string };
let usdt: { id: string; address: string };
let assets: { id: string; symbol: string; address: string }[];
const problems: string[] = [];

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  devnet = await startSolanaDevnet({ slotMs: 50, finalizedLag: 16 });
  t = await startTestKeel({ ...PAYMENT_CONFIG, CHECKOUT_LATE_PAYMENT_GRACE_SECONDS: GRACE_SECONDS, KEEL_CHAINS: formatChainsConfig([...parseChainsConfig(process.env.KEEL_CHAINS!), devSolanaSpec(devnet.rpcUrl)]) });
  shop = await merchant(t);
  solanaId = ((await shop.org.core.get('/v1/blockchains')).body.data as { id: string; isEvmCompatible: boolean }[]).find((c) => !c.isEvmCompatible)!.id;
  const created = await shop.org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Shop on Solana' });
  expect(created.status).toBe(201);
  solanaWallet = created.body.data;
  assets = (await shop.org.core.get(`/v1/assets?blockchainId=${solanaId}`)).body.data as { id: string; symbol: string; address: string }[];
  usdc = assets.find((a) => a.symbol === 'USDC')!;
  usdt = assets.find((a) => a.symbol === 'USDT')!;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await devnet?.stop();
});

/** Pays on the sandbox Solana network through the dev faucet (a real transfer in a block). */
async function paySolana(to: string, asset: string, amount: string): Promise<string> {
  const res = await shop.org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: to, asset, amount });
  if (res.status !== 200) throw new Error(`the faucet answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data.txHash;
}

async function solanaLink(body: Record<string, unknown>): Promise<{ id: string; slug: string; allowedBlockchains: { id: string }[]; solanaSettlementWalletId: string }> {
  const res = await shop.org.core.post('/v1/payment/links', { currency: 'USD', evmSettlementWalletId: shop.wallet.id, solanaSettlementWalletId: solanaWallet.id, ...body });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function transfersOf(linkId: string): Promise<{ kind: string; status: string; txHash: string; amount: string; asset: { symbol: string } }[]> {
  return (await shop.org.core.get(`/v1/payment/links/${linkId}/transfers`)).body.data;
}

test('the hosted page offers Solana USDC, shows the Solana Pay request and its QR code, and turns paid when the address shown is paid; a second payment is a REPEAT', async () => {
  const link = await solanaLink({ name: 'Espresso beans', description: 'Single origin, 1 kg', amount: '7.25', successMessage: 'Payment received, thank you!' });
  expect(link.solanaSettlementWalletId).toBe(solanaWallet.id);
  expect(link.allowedBlockchains.map((c) => c.id)).toEqual(expect.arrayContaining([shop.wallet.blockchainId, solanaId]));

  const page: Page = await browser.newPage({ viewport: { width: 390, height: 844 } });
  page.on('console', (msg) => msg.type() === 'error' && problems.push(`console: ${msg.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('response', (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
  expect((await page.goto(`${t.coreUrl}/pay/${link.slug}`))?.status()).toBe(200);
  await page.locator('#choose').waitFor();
  await page.getByLabel('Network').selectOption(solanaId);
  await page.getByLabel('Asset').selectOption(usdc.id);
  const qrCode = page.waitForResponse((r) => r.url().endsWith('/qr.svg'));
  await page.getByRole('button', { name: 'Continue to payment' }).click();
  await page.locator('#status[data-state="waiting"]').waitFor({ timeout: 30_000 });

  const address = await page.getByLabel('To this address').inputValue();
  expect(address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  const uri = await page.locator('#payment-uri').inputValue();
  const reference = /[?&]reference=([1-9A-HJ-NP-Za-km-z]{32,44})(&|$)/.exec(uri)?.[1];
  expect(reference).toBeDefined();
  expect(uri).toBe(`solana:${address}?amount=7.25&spl-token=${USDC.address}&reference=${reference}&label=Espresso%20beans&message=Single%20origin%2C%201%20kg`);
  expect(await page.locator('#open-wallet').getAttribute('href')).toBe(uri);
  // The QR code is the server's drawing of that very request.
  const qr = await qrCode;
  expect(qr.headers()['content-type']).toContain('image/svg+xml');
  expect(await qr.text()).toBe(await qrSvg(uri));
  expect(await page.locator('#qr').isVisible()).toBe(true);
  await page.screenshot({ path: join(ARTIFACTS, '1-waiting.png'), fullPage: true });

  // Another checkout of the link has a reference of its own.
  const other = (await publicClient(t).post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId: solanaId, assetId: usdc.id })).body.data;
  expect(other.paymentUri).toMatch(/^solana:/);
  expect(other.paymentUri).not.toContain(reference);
  expect(other.depositAddress).not.toBe(address);

  // The settlement wallet holds SOL to top the checkout's address up with for the sweep's fee.
  const sol = assets.find((a) => a.symbol === 'SOL')!;
  await paySolana(solanaWallet.walletAddress, 'SOL', '1');
  await eventually(async () => (await t.keel.services.ledger.balance(t.keel.platform.db, solanaWallet.id, sol.id, 'custody')).available > 0n, 30_000, 100);
  const txHash = await paySolana(address, 'USDC', '7.25');
  await page.locator('#status[data-state="paid"]').waitFor({ timeout: 30_000 });
  expect(await page.locator('#message').textContent()).toBe('Payment received, thank you!');
  await page.screenshot({ path: join(ARTIFACTS, '2-paid.png'), fullPage: true });

  const repeat = await paySolana(address, 'USDC', '1');
  await eventually(async () => (await transfersOf(link.id)).length === 2, 30_000, 100);
  const transfers = await transfersOf(link.id);
  expect(transfers).toEqual(expect.arrayContaining([
    expect.objectContaining({ kind: 'PAYMENT', status: 'CONFIRMED', txHash, amount: '7.25' }),
    expect.objectContaining({ kind: 'REPEAT', status: 'CONFIRMED', txHash: repeat, amount: '1' }),
  ]));
  const view = (await shop.org.core.get(`/v1/payment/links/${link.id}`)).body.data;
  expect(view.paymentsConsumed).toBe(1);
  // Swept into the settlement wallet as on EVM (the master wallet tops the checkout's address up with SOL for the fee first).
  const rpc = createSolanaRpc(devnet.rpcUrl);
  const usdcOf = async (owner: string) =>
    (await rpc.getTokenAccountsByOwner(owner as Address, { mint: USDC.address as Address }, { encoding: 'jsonParsed', commitment: 'finalized' }).send()).value.map((a) => (a.account.data as { parsed: { info: { tokenAmount: { amount: string } } } }).parsed.info.tokenAmount.amount);
  await eventually(async () => (await usdcOf(solanaWallet.walletAddress)).join() === '8250000', 60_000, 200);
  expect(await usdcOf(address)).toEqual(['0']);
  const ledger = async (walletId: string) => (await t.keel.services.ledger.balance(t.keel.platform.db, walletId, usdc.id, 'custody')).available;
  await eventually(async () => (await ledger(solanaWallet.id)) === 8_250_000n, 10_000);
  const addresses = (await shop.org.core.get(`/v1/master-wallets/${solanaWallet.id}/addresses`)).body.data as { address: string }[];
  expect(addresses.map((a) => a.address)).toContain(address);
  expect(problems).toEqual([]);
});

test("a link's longest name and description fit the QR code: the Solana Pay request is shortened (never its address, amount, mint or reference), and paymentUri is the request the QR code holds", async () => {
  const link = await solanaLink({ name: `Gift box ${'N'.repeat(191)}`, description: 'Hand-wrapped, with a card. '.repeat(74), amount: '7.25' });
  const session = (await publicClient(t).post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId: solanaId, assetId: usdc.id })).body.data;
  const needs = new RegExp(`^solana:${session.depositAddress}\\?amount=7\\.25&spl-token=${USDC.address}&reference=[1-9A-HJ-NP-Za-km-z]{32,44}&label=Gift%20box%20N+&message=Hand-wrapped%2C%20with%20a%20card.%20.*%E2%80%A6$`);
  const qr = await publicClient(t).get(session.qrCodeUrl);
  expect(qr.status).toBe(200);
  expect(session.paymentUri).toMatch(needs);
  expect(qr.body).toBe(await qrSvg(session.paymentUri));
  // The session as read again names the same request.
  expect((await publicClient(t).get(sessionPath(session))).body.data.paymentUri).toBe(session.paymentUri);
});

test('a payment in another mint is not counted; an underpayment stays UNDERPAID past the expiry and a payment after it is LATE', async () => {
  const client = publicClient(t);
  const link = await solanaLink({ name: 'Short offer', amount: '5', expiresAt: new Date(Date.now() + 12_000).toISOString() });
  const start = await client.post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId: solanaId, assetId: usdc.id });
  expect(start.status).toBe(201);
  const session = start.body.data;

  const wrong = await paySolana(session.depositAddress, 'USDT', '5');
  const seen = await eventually(async () => {
    const s = (await client.get(sessionPath(session))).body.data;
    return s.transfersNotCounted === 1 && s;
  }, 30_000, 100);
  expect(seen).toMatchObject({ status: 'AWAITING_PAYMENT', amountReceived: '0', amountDue: '5' });
  expect(seen.transfers).toEqual([expect.objectContaining({ txHash: wrong, kind: 'WRONG_ASSET', asset: expect.objectContaining({ id: usdt.id }) })]);

  await paySolana(session.depositAddress, 'USDC', '2');
  const under = await sessionReaches(client, session, 'UNDERPAID');
  expect(under).toMatchObject({ amountReceived: '2', amountDue: '3' });
  await eventually(() => Date.now() > new Date(session.expiresAt).getTime() + 1_000, 20_000, 200);
  const late = await paySolana(session.depositAddress, 'USDC', '3');
  await eventually(async () => (await transfersOf(link.id)).some((x) => x.txHash === late), 30_000, 100);
  const after = (await client.get(sessionPath(session))).body.data;
  expect(after).toMatchObject({ status: 'UNDERPAID', amountReceived: '2', amountDue: '3', transfersNotCounted: 2 });
  expect(after.transfers.find((x: { txHash: string }) => x.txHash === late)).toMatchObject({ kind: 'LATE' });
  expect((await shop.org.core.get(`/v1/payment/links/${link.id}`)).body.data.paymentsConsumed).toBe(0);
});

test('an expired Solana checkout keeps its address watched through the late-payment grace, then the address is retired and no longer watched', async () => {
  const client = publicClient(t);
  const link = await solanaLink({ name: 'Brief offer', amount: '1', expiresAt: new Date(Date.now() + 6_000).toISOString() });
  const session = (await client.post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId: solanaId, assetId: usdc.id })).body.data;
  const db = t.keel.platform.db;
  const checkoutRow = async () => db('checkouts').where({ id: session.id }).first('addressId', 'addressRetiredAt', 'expiresAt');
  const watched = async () => (await t.keel.services.watchedWallets.on(solanaId)).has(session.depositAddress.toLowerCase());
  expect(await watched()).toBe(true);
  const { expiresAt } = await checkoutRow();

  await sessionReaches(client, session, 'EXPIRED');
  // Within the grace: still watched (a late payment would be recorded as LATE).
  expect(Date.now()).toBeLessThan(new Date(expiresAt).getTime() + GRACE_SECONDS * 1000);
  expect((await checkoutRow()).addressRetiredAt).toBeNull();
  expect(await watched()).toBe(true);

  const retired = await eventually(async () => {
    const row = await checkoutRow();
    return row.addressRetiredAt !== null && row;
  }, 45_000, 200);
  // Not before the expiry and the grace had passed.
  expect(new Date(retired.addressRetiredAt).getTime()).toBeGreaterThanOrEqual(new Date(expiresAt).getTime() + GRACE_SECONDS * 1000);
  expect(await watched()).toBe(false);
  expect((await shop.org.core.get(`/v1/addresses/${retired.addressId}`)).body.data.isActive).toBe(false);
});

test("another organisation's Solana wallet is 404; an EVM wallet as the Solana one (or a Solana wallet as the EVM one) is 400 INVALID_NETWORK; null takes the Solana wallet off", async () => {
  const other = await t.createOrg();
  const theirs = (await other.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Not yours' })).body.data;
  const base = { name: 'Checks', currency: 'USD', amount: '1', evmSettlementWalletId: shop.wallet.id };
  const foreign = await shop.org.core.post('/v1/payment/links', { ...base, solanaSettlementWalletId: theirs.id });
  expect(foreign.status).toBe(404);
  expect(foreign.body.error.code).toBe('WALLET_NOT_FOUND');

  const evm = await shop.org.core.post('/v1/payment/links', { ...base, solanaSettlementWalletId: shop.wallet.id });
  expect(evm.status).toBe(400);
  expect(evm.body.error).toMatchObject({ code: 'INVALID_NETWORK', details: { fields: [{ field: 'solanaSettlementWalletId', error: 'INVALID_FIELD' }] } });
  const swapped = await shop.org.core.post('/v1/payment/links', { ...base, evmSettlementWalletId: solanaWallet.id });
  expect(swapped.status).toBe(400);
  expect(swapped.body.error.code).toBe('INVALID_NETWORK');

  const link = await solanaLink({ name: 'Updatable', amount: '1' });
  const stolen = await shop.org.core.put(`/v1/payment/links/${link.id}`, { solanaSettlementWalletId: theirs.id });
  expect(stolen.status).toBe(404);
  const off = await shop.org.core.put(`/v1/payment/links/${link.id}`, { solanaSettlementWalletId: null });
  expect(off.status).toBe(200);
  expect(off.body.data.solanaSettlementWalletId).toBeNull();
  expect(off.body.data.allowedBlockchains.map((c: { id: string }) => c.id)).not.toContain(solanaId);
  const refused = await publicClient(t).post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId: solanaId, assetId: usdc.id });
  expect(refused.status).toBe(422);
  expect(JSON.stringify(refused.body.error)).toContain('blockchainId');
  // Other organisations' links never list by this wallet.
  expect((await other.core.get(`/v1/payment/links?masterWalletId=${solanaWallet.id}`)).body.data).toEqual([]);
  expect((await shop.org.core.get(`/v1/payment/links?masterWalletId=${solanaWallet.id}`)).body.data.length).toBeGreaterThanOrEqual(2);
});

test("a Solana settlement wallet's analytics.paymentLinksCount counts the links settling into it, as listing the links by the wallet does; the EVM wallet's counts them too", async () => {
  const counted = async (walletId: string) => (await shop.org.core.get(`/v1/master-wallets/${walletId}`)).body.data.analytics.paymentLinksCount;
  const listed = async (walletId: string) => (await shop.org.core.get(`/v1/payment/links?masterWalletId=${walletId}`)).body.total;
  const [solanaBefore, evmBefore] = [await counted(solanaWallet.id), await counted(shop.wallet.id)];

  const link = await solanaLink({ name: 'Counted', amount: '1' });
  expect([await counted(solanaWallet.id), await counted(shop.wallet.id)]).toEqual([solanaBefore + 1, evmBefore + 1]);
  for (const id of [solanaWallet.id, shop.wallet.id]) expect(await counted(id)).toBe(await listed(id));
  const inList = (await shop.org.core.get('/v1/master-wallets?limit=100')).body.data.find((w: { id: string }) => w.id === solanaWallet.id);
  expect(inList.analytics.paymentLinksCount).toBe(solanaBefore + 1);

  // Taken off the link (or the link deleted), the Solana wallet no longer counts it.
  expect((await shop.org.core.put(`/v1/payment/links/${link.id}`, { solanaSettlementWalletId: null })).status).toBe(200);
  expect([await counted(solanaWallet.id), await counted(shop.wallet.id)]).toEqual([solanaBefore, evmBefore + 1]);
  const deleted = await solanaLink({ name: 'Deleted', amount: '1' });
  expect((await shop.org.core.delete(`/v1/payment/links/${deleted.id}`)).status).toBe(200);
  expect(await counted(solanaWallet.id)).toBe(solanaBefore);
});

describe('payment intents on Solana', () => {
  async function intent(body: Record<string, unknown>) {
    return shop.org.core.post('/v1/payment/intents', { assetId: usdc.id, masterWalletId: solanaWallet.id, ...body });
  }
  async function reaches(id: string, status: string) {
    return eventually(async () => {
      const res = await shop.org.core.get(`/v1/payment/intents/${id}`);
      return res.body.data?.status === status && res.body.data;
    }, 30_000, 100);
  }

  test('a USDC intent is a Solana Pay request; another mint is not counted; an underpayment topped up succeeds', async () => {
    const created = await intent({ amount: '4', description: 'Order 7' });
    expect(created.status).toBe(201);
    const pi = created.body.data;
    expect(pi).toMatchObject({ status: 'REQUIRES_PAYMENT', amount: '4', asset: { id: usdc.id, symbol: 'USDC' }, blockchain: { id: solanaId, chainId: null }, masterWalletId: solanaWallet.id });
    const reference = /[?&]reference=([1-9A-HJ-NP-Za-km-z]{32,44})&/.exec(pi.paymentUri)?.[1];
    expect(pi.paymentUri).toBe(`solana:${pi.depositAddress}?amount=4&spl-token=${USDC.address}&reference=${reference}&label=Shop%20on%20Solana&message=Order%207`);

    const wrong = await paySolana(pi.depositAddress, 'USDT', '4');
    const seen = await eventually(async () => {
      const r = (await shop.org.core.get(`/v1/payment/intents/${pi.id}`)).body.data;
      return r.transfersNotCounted === 1 && r;
    }, 30_000, 100);
    expect(seen).toMatchObject({ status: 'REQUIRES_PAYMENT', amountReceived: '0', transfers: [{ txHash: wrong, kind: 'WRONG_ASSET' }] });

    await paySolana(pi.depositAddress, 'USDC', '1.5');
    expect(await reaches(pi.id, 'UNDERPAID')).toMatchObject({ amountReceived: '1.5', amountDue: '2.5' });
    await paySolana(pi.depositAddress, 'USDC', '2.5');
    expect(await reaches(pi.id, 'SUCCEEDED')).toMatchObject({ checkoutStatus: 'PAID', amountReceived: '4', amountDue: '0' });
    // Final as recorded: each payment moves the intent once, never through PROCESSING.
    const events = await t.keel.platform.db('outbox_events').where('type', 'like', 'payment_intent.%').orderBy('sequence').select('type', 'envelope');
    const mine = events.filter((e: { envelope: any }) => (typeof e.envelope === 'string' ? JSON.parse(e.envelope) : e.envelope).data.paymentIntentId === pi.id);
    expect(mine.map((e: { type: string }) => e.type)).toEqual(['payment_intent.created', 'payment_intent.underpaid', 'payment_intent.succeeded']);
  });

  test('an intent paid in full goes from REQUIRES_PAYMENT straight to SUCCEEDED: the payment seen at the head (processed, not final) moves nothing, no payment_intent.processing', async () => {
    const pi = (await intent({ amount: '2' })).body.data;
    const paid = await paySolana(pi.depositAddress, 'USDC', '2');
    // The head carries the payment for a while before its slot is finalized and the deposit recorded.
    expect(await reaches(pi.id, 'SUCCEEDED')).toMatchObject({ checkoutStatus: 'PAID', amountReceived: '2', transfers: [{ txHash: paid, kind: 'PAYMENT', status: 'CONFIRMED' }] });
    const events = await t.keel.platform.db('outbox_events').where('type', 'like', 'payment_intent.%').orderBy('sequence').select('type', 'envelope');
    const mine = events.map((e: { type: string; envelope: any }) => ({ type: e.type, data: (typeof e.envelope === 'string' ? JSON.parse(e.envelope) : e.envelope).data })).filter((e) => e.data.paymentIntentId === pi.id);
    expect(mine.map((e) => [e.type, e.data.checkoutStatus])).toEqual([
      ['payment_intent.created', 'AWAITING_PAYMENT'],
      ['payment_intent.succeeded', 'PAID'],
    ]);
  });

  test('an unpaid intent expires and a payment after it is LATE; SOL is asked for without a mint', async () => {
    const sol = (await shop.org.core.get(`/v1/assets?blockchainId=${solanaId}&symbol=SOL`)).body.data[0];
    const pi = (await intent({ amount: '0.5', assetId: sol.id, expiresInSeconds: 5 })).body.data;
    expect(pi.paymentUri).toMatch(new RegExp(`^solana:${pi.depositAddress}\\?amount=0\\.5&reference=[1-9A-HJ-NP-Za-km-z]{32,44}&label=Shop%20on%20Solana$`));
    await reaches(pi.id, 'EXPIRED');
    // Block times are whole seconds (as on EVM): a payment in the expiry's own second is in time.
    await eventually(() => Date.now() > new Date(pi.expiresAt).getTime() + 1_500, 20_000, 100);
    const late = await paySolana(pi.depositAddress, 'SOL', '0.5');
    const after = await eventually(async () => {
      const r = (await shop.org.core.get(`/v1/payment/intents/${pi.id}`)).body.data;
      return r.transfers.length === 1 && r;
    }, 30_000, 100);
    expect(after).toMatchObject({ status: 'EXPIRED', amountReceived: '0', transfers: [{ txHash: late, kind: 'LATE' }] });
  });

  test('an amount is asked for within u64, what one SOL or SPL transfer carries: the largest is a request, one base unit more is 422 on amount (an EVM asset takes it: uint256)', async () => {
    const largest = '18446744073709.551615'; // 2^64 − 1 base units of USDC (6 decimals)
    const fits = await intent({ amount: largest });
    expect(fits.status).toBe(201);
    expect(fits.body.data.paymentUri).toContain(`?amount=${largest}&spl-token=${USDC.address}&`);
    const tooLarge = { status: 422, code: 'INVALID_FIELD', fields: [{ field: 'amount', error: expect.stringMatching(/^is too large: a Solana transfer carries at most 18446744073709551615 base units/) }] };
    const refusal = (res: { status: number; body: any }) => ({ status: res.status, code: res.body.error?.code, fields: res.body.error?.details?.fields });
    expect(refusal(await intent({ amount: '18446744073709.551616' }))).toEqual(tooLarge);
    const sol = (await shop.org.core.get(`/v1/assets?blockchainId=${solanaId}&symbol=SOL`)).body.data[0];
    expect(refusal(await intent({ amount: '18446744073.709551616', assetId: sol.id }))).toEqual(tooLarge);
    expect((await shop.org.core.post('/v1/payment/intents', { assetId: shop.usdc.id, masterWalletId: shop.wallet.id, amount: '18446744073709.551616' })).status).toBe(201);

    // A link's fixed amount is asked of every asset it allows: one Solana asset that cannot carry it refuses the link.
    const link = { name: 'Everything', currency: 'USD', evmSettlementWalletId: shop.wallet.id, solanaSettlementWalletId: solanaWallet.id };
    expect(refusal(await shop.org.core.post('/v1/payment/links', { ...link, amount: '18446744073709.551616' }))).toEqual(tooLarge);
    // A payer's own amount: refused on Solana, taken on EVM.
    const open = await solanaLink({ name: 'Pay what you like' });
    const session = (blockchainId: string, assetId: string) => publicClient(t).post(`/v1/checkout/links/${open.slug}/sessions`, { blockchainId, assetId, amount: '18446744073709.551616' });
    expect(refusal(await session(solanaId, usdc.id))).toEqual(tooLarge);
    expect((await session(shop.wallet.blockchainId, shop.usdc.id)).status).toBe(201);
  });

  test("another organisation's wallet is 404; an EVM wallet for a Solana asset is 400 INVALID_NETWORK", async () => {
    const other = await t.createOrg();
    const theirs = (await other.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Not yours' })).body.data;
    expect((await intent({ amount: '1', masterWalletId: theirs.id })).status).toBe(404);
    const evm = await intent({ amount: '1', masterWalletId: shop.wallet.id });
    expect(evm.status).toBe(400);
    expect(evm.body.error.code).toBe('INVALID_NETWORK');
  });
});
