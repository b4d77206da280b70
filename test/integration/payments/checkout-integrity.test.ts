import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { fundFromFaucet } from '../../../src/platform/chain/faucet';
import { keelCommand } from '../../support/keel-cli';
import { ApiClient } from '../../support/api-client';
import { eventually, merchant, Merchant, PAYMENT_CONFIG, publicClient, received, sessionPath, sessionReaches, startTestKeel, subscribe, TestKeel, WebhookReceiver } from './support';

/** A dev account no other test sends from, named on a sanctions list loaded for this Keel only. */
const SANCTIONED_PAYER = devChainAccount(6);
/** Where refunds go: an address Keel does not watch. */
const PAYER = devChainAccount(3).address;

interface Chain {
  id: string;
  usdc: { id: string; address: string; decimals: number };
  dai: { id: string };
  usdt: { id: string };
}

/**
 * What a checkout counts and who may read it: only its own asset on its own chain, never an
 * AML-flagged deposit; a session only under its own link's slug; a limited link's payment taken by
 * a recorded payment, never by an open session.
 */
describe('a checkout counts only its own asset on its own chain, from a sender not on a sanctions list', () => {
  const hooks = new WebhookReceiver();
  let t: TestKeel;
  let m: Merchant;
  let a: Chain;
  let b: Chain;

  beforeAll(async () => {
    t = await startTestKeel({ ...PAYMENT_CONFIG, SANCTIONS_REFRESH_INTERVAL_MS: 100 });
    const org = await t.createOrg();
    const chains = (await org.core.get('/v1/blockchains')).body.data;
    const chain = async (blockchainId: string): Promise<Chain> => {
      const asset = async (symbol: string) => (await org.core.get(`/v1/assets?blockchainId=${blockchainId}&symbol=${symbol}`)).body.data[0];
      return { id: blockchainId, usdc: await asset('USDC'), dai: await asset('DAI'), usdt: await asset('USDT') };
    };
    [a, b] = [await chain(chains[0].id), await chain(chains[1].id)];
    // One settlement wallet on both dev chains: a checkout address of chain A is also watched on B.
    const created = await org.core.post('/v1/master-wallets', { blockchainId: a.id, name: 'Shop treasury', configurations: { enableMultiChain: true } });
    expect(created.status).toBe(201);
    for (const c of [a, b]) expect((await org.core.post('/v1/dev/faucet', { blockchainId: c.id, address: created.body.data.walletAddress, amount: '5' })).status).toBe(200);
    m = { org, wallet: { ...created.body.data, blockchainId: a.id }, usdc: a.usdc };
    await subscribe(m, await hooks.start(), ['payment_intent.*', 'payment_link_transfer.*']);
  }, 120_000);
  afterAll(async () => {
    await hooks.stop();
    await t?.stop();
  });

  async function fund(chain: Chain, to: string, asset: string, amount: string): Promise<string> {
    const res = await m.org.core.post('/v1/dev/faucet', { blockchainId: chain.id, address: to, asset, amount });
    expect(res.status).toBe(200);
    return res.body.data.txHash;
  }

  async function intent(amount: string): Promise<any> {
    const res = await m.org.core.post('/v1/payment/intents', { amount, assetId: a.usdc.id, masterWalletId: m.wallet.id });
    expect(res.status).toBe(201);
    return res.body.data;
  }

  /** The intent once every one of `count` transfers has its confirmations. */
  async function intentWithConfirmed(id: string, count: number): Promise<any> {
    return eventually(async () => {
      const data = (await m.org.core.get(`/v1/payment/intents/${id}`)).body.data;
      return data.transfers.length === count && data.transfers.every((x: any) => x.status === 'CONFIRMED') && data;
    }, 40_000, 100);
  }

  async function intentReaches(id: string, status: string): Promise<any> {
    return eventually(async () => {
      const data = (await m.org.core.get(`/v1/payment/intents/${id}`)).body.data;
      return data.status === status && data;
    }, 40_000, 100);
  }

  function eventTypesOf(id: string): string[] {
    return received(hooks)
      .filter((e) => e.data.paymentIntentId === id)
      .map((e) => e.type);
  }

  test('an intent for 5 USDC: 5,000,000 base units of DAI and 5 USDC on the other chain are recorded, not counted and swept; then 5 USDC on its chain succeeds it once', async () => {
    const pi = await intent('5');
    // The payment: the same raw value (5,000,000) in a token of 18 decimals.
    const daiTx = await fund(a, pi.depositAddress, 'DAI', '0.000000000005');
    const otherChainTx = await fund(b, pi.depositAddress, 'USDC', '5');
    const recorded = await intentWithConfirmed(pi.id, 2);
    expect(recorded).toMatchObject({ status: 'REQUIRES_PAYMENT', checkoutStatus: 'AWAITING_PAYMENT', amountReceived: '0', amountConfirming: '0', amountDue: '5', transfersNotCounted: 2 });
    const byTx = new Map(recorded.transfers.map((x: any) => [x.txHash, x]));
    expect(byTx.get(daiTx)).toMatchObject({
      kind: 'WRONG_ASSET',
      amount: '0.000000000005',
      rawAmount: '5000000',
      asset: { id: a.dai.id, symbol: 'DAI', decimals: 18 },
      blockchain: { id: a.id },
      notCountedReason: expect.stringContaining('DAI is not the asset asked for: the checkout takes USDC'),
    });
    expect(byTx.get(otherChainTx)).toMatchObject({ kind: 'WRONG_CHAIN', amount: '5', asset: { id: b.usdc.id, symbol: 'USDC' }, blockchain: { id: b.id }, notCountedReason: expect.stringContaining('Sent on') });

    // Swept to the settlement wallet (DAI on chain A, USDC on chain B), where the merchant refunds them.
    await eventually(async () => {
      const balances = (await m.org.core.get(`/v1/master-wallets/${m.wallet.id}/balances`)).body.data;
      const of = (assetId: string) => balances.find((x: any) => x.asset.id === assetId)?.rawBalance;
      return of(a.dai.id) === '5000000' && of(b.usdc.id) === '5000000';
    }, 40_000, 250);
    // The swept DAI is the wallet's to spend once the sweep's arrival has its confirmations; until
    // then the refund is refused as INSUFFICIENT_FUNDS, which writes nothing.
    const refund = await eventually(async () => {
      const res = await m.org.core.post(`/v1/master-wallets/${m.wallet.id}/transfer`, { assets: [{ assetId: a.dai.id, recipient: PAYER, amount: '0.000000000005' }], note: 'refund: wrong asset' });
      if (res.status !== 201) expect(res.body.error.code).toBe('INSUFFICIENT_FUNDS');
      return res.status === 201 && res;
    }, 40_000, 250);
    await eventually(async () => (await m.org.core.get(`/v1/transfers/${refund.body.data.id}`)).body.data.status === 'CONFIRMED', 40_000, 250);

    // Nothing moved: no event beyond the creation.
    expect(eventTypesOf(pi.id)).toEqual(['payment_intent.created']);

    const paidTx = await fund(a, pi.depositAddress, 'USDC', '5');
    const done = await intentReaches(pi.id, 'SUCCEEDED');
    expect(done).toMatchObject({ checkoutStatus: 'PAID', amountReceived: '5', amountDue: '0', amountOverpaid: '0', transfersNotCounted: 2 });
    expect(done.transfers.find((x: any) => x.txHash === paidTx)).toMatchObject({ kind: 'PAYMENT', notCountedReason: null, amount: '5', asset: { id: a.usdc.id } });
    await eventually(() => eventTypesOf(pi.id).includes('payment_intent.succeeded'));
    // Let any stray event arrive before counting.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(eventTypesOf(pi.id)).toEqual(['payment_intent.created', 'payment_intent.processing', 'payment_intent.succeeded']);
  }, 120_000);

  test("a link session: another asset and the other chain are payment-link transfers that consume nothing; the session's own asset pays it", async () => {
    const link = (await m.org.core.post('/v1/payment/links', { name: 'Mug', currency: 'USD', amount: '3', evmSettlementWalletId: m.wallet.id, paymentLimit: 1 })).body.data;
    // USDT on chain A and USDC on chain B are both assets the link takes, but not this session's.
    expect(link.allowedAssets.map((x: any) => x.id)).toEqual(expect.arrayContaining([a.usdt.id, b.usdc.id]));
    const session = (await publicClient(t).post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId: a.id, assetId: a.usdc.id })).body.data;
    const usdtTx = await fund(a, session.depositAddress, 'USDT', '3');
    const otherChainTx = await fund(b, session.depositAddress, 'USDC', '3');
    const transfers = await eventually(async () => {
      const list = (await m.org.core.get(`/v1/payment/links/${link.id}/transfers`)).body.data;
      return list.length === 2 && list.every((x: any) => x.status === 'CONFIRMED') && list;
    }, 40_000, 100);
    const byTx = new Map(transfers.map((x: any) => [x.txHash, x]));
    expect(byTx.get(usdtTx)).toMatchObject({ kind: 'WRONG_ASSET', amount: '3', asset: { id: a.usdt.id }, checkoutStatus: 'AWAITING_PAYMENT', paymentLinkId: link.id });
    expect(byTx.get(otherChainTx)).toMatchObject({ kind: 'WRONG_CHAIN', amount: '3', asset: { id: b.usdc.id }, blockchain: { id: b.id }, checkoutStatus: 'AWAITING_PAYMENT' });
    expect((await m.org.core.get(`/v1/payment/links/${link.id}/transfers?kind=WRONG_CHAIN`)).body.data.map((x: any) => x.txHash)).toEqual([otherChainTx]);
    const pub = (await publicClient(t).get(sessionPath(session))).body.data;
    expect(pub).toMatchObject({ status: 'AWAITING_PAYMENT', amountReceived: '0', transfersNotCounted: 2, redirectUrl: null });
    expect(pub.transfers.map((x: any) => [x.kind, x.asset.symbol, x.blockchain.id]).sort()).toEqual([['WRONG_ASSET', 'USDT', a.id], ['WRONG_CHAIN', 'USDC', b.id]].sort());
    expect((await m.org.core.get(`/v1/payment/links/${link.id}`)).body.data.paymentsConsumed).toBe(0);
    const created = received(hooks).filter((e) => e.type === 'payment_link_transfer.created' && e.data.paymentLinkId === link.id);
    expect(created.map((e) => e.data.kind).sort()).toEqual(['WRONG_ASSET', 'WRONG_CHAIN']);

    await fund(a, session.depositAddress, 'USDC', '3');
    expect(await sessionReaches(publicClient(t), session, 'PAID', 40_000)).toMatchObject({ amountReceived: '3', transfersNotCounted: 2 });
    expect((await m.org.core.get(`/v1/payment/links/${link.id}`)).body.data.paymentsConsumed).toBe(1);
  }, 120_000);

  test("the merchant paying its own intent from one of its wallets is a payment like any other's (only the settlement sweep's gas top-up is Keel's own move)", async () => {
    await fund(a, m.wallet.walletAddress, 'USDC', '3');
    const pi = await intent('3');
    // The faucet's USDC is the wallet's to spend once its deposit has its confirmations.
    const sent = await eventually(async () => {
      const res = await m.org.core.post(`/v1/master-wallets/${m.wallet.id}/transfer`, { assets: [{ assetId: a.usdc.id, recipient: pi.depositAddress, amount: '3' }], note: 'paying our own invoice' });
      if (res.status !== 201) expect(res.body.error.code).toBe('INSUFFICIENT_FUNDS');
      return res.status === 201 && res;
    }, 40_000, 250);
    const done = await intentReaches(pi.id, 'SUCCEEDED');
    const txHash = (await m.org.core.get(`/v1/transfers/${sent.body.data.id}`)).body.data.items[0].txHash;
    expect(done).toMatchObject({ checkoutStatus: 'PAID', amountReceived: '3', transfersNotCounted: 0, transfers: [{ txHash, kind: 'PAYMENT' }] });
    expect(done.transfers[0].from.toLowerCase()).toBe(m.wallet.walletAddress.toLowerCase());
    // Swept back to the settlement wallet like any payment.
    await eventually(async () => {
      const history = (await m.org.core.get(`/v1/transfers?masterWalletId=${m.wallet.id}`)).body.data;
      return history.some((x: any) => x.kind === 'sweep' && x.status === 'CONFIRMED' && x.fromAddress.toLowerCase() === pi.depositAddress.toLowerCase());
    }, 40_000, 250);
  }, 120_000);

  test('a deposit from a sanctioned sender is recorded as AML_FLAGGED, held and not counted; the payer paying cleanly then succeeds the intent', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'keel-checkout-aml-'));
    const file = path.join(dir, 'sanctioned_addresses_TEST.txt');
    writeFileSync(file, `${SANCTIONED_PAYER.address.toLowerCase()}\n`);
    // Dated today: newer than the shipped snapshot (a list dated after tomorrow is refused).
    await keelCommand(t.config, ['aml', 'load', file, '--date', new Date().toISOString().slice(0, 10)]);
    await eventually(async () => (await m.org.core.get('/v1/aml/lists')).body.data.source === file, 10_000);
    // The fall back to waiting (a deposit seen at the head, then recorded AML_FLAGGED) is an event a merchant may name.
    expect((await m.org.core.get('/v1/webhooks/event-types')).body.data.names).toContain('payment_intent.requires_payment');
    const fallBacks = new WebhookReceiver();
    const named = await m.org.core.post('/v1/webhooks', { url: await fallBacks.start(), name: 'back to waiting', eventTypes: ['payment_intent.requires_payment'] });
    expect(named.status).toBe(201);

    const pi = await intent('4');
    await fund(a, SANCTIONED_PAYER.address, 'USDC', '4');
    const rpcUrl = t.keel.services.networks.get(a.id)!.spec.rpcUrl;
    const { txHash } = await fundFromFaucet(rpcUrl, SANCTIONED_PAYER.privateKey, { to: pi.depositAddress, token: a.usdc, amount: '4' });
    const flagged = (await intentWithConfirmed(pi.id, 1)).transfers[0];
    expect(flagged).toMatchObject({ txHash, kind: 'AML_FLAGGED', amount: '4', asset: { id: a.usdc.id }, notCountedReason: expect.stringContaining('sanctions list') });
    const now = (await m.org.core.get(`/v1/payment/intents/${pi.id}`)).body.data;
    expect(now).toMatchObject({ status: 'REQUIRES_PAYMENT', amountReceived: '0', amountConfirming: '0', transfersNotCounted: 1 });
    // Listed for review like any flagged deposit.
    expect((await m.org.core.get('/v1/aml/flagged-transfers?released=false')).body.data.map((x: any) => x.hash)).toContain(txHash);

    const paidTx = await fund(a, pi.depositAddress, 'USDC', '4');
    const done = await intentReaches(pi.id, 'SUCCEEDED');
    expect(done).toMatchObject({ amountReceived: '4', amountOverpaid: '0', transfersNotCounted: 1 });
    expect(done.transfers.map((x: any) => [x.txHash, x.kind])).toEqual([
      [txHash, 'AML_FLAGGED'],
      [paidTx, 'PAYMENT'],
    ]);
    await eventually(() => eventTypesOf(pi.id).includes('payment_intent.succeeded'));
    await new Promise((r) => setTimeout(r, 1_000));
    expect(eventTypesOf(pi.id).filter((x) => x === 'payment_intent.succeeded')).toHaveLength(1);
    // Whether the head showed the flagged deposit first (PROCESSING, then back) is the watchers' race;
    // the subscription naming the event gets every one the wildcard does.
    const backToWaiting = (r: WebhookReceiver) => received(r).filter((e) => e.data.paymentIntentId === pi.id && e.type === 'payment_intent.requires_payment').map((e) => e.id);
    await eventually(() => backToWaiting(fallBacks).length === backToWaiting(hooks).length, 10_000);
    expect(backToWaiting(fallBacks)).toEqual(backToWaiting(hooks));
    await fallBacks.stop();
  }, 120_000);

  test('a paymentLimit: 1 link is paid while anonymous clients open 50 sessions around it; a second payment finds no payment left and is OVER_LIMIT', async () => {
    const link = (await m.org.core.post('/v1/payment/links', { name: 'Limited print', currency: 'USD', amount: '2', evmSettlementWalletId: m.wallet.id, paymentLimit: 1, allowedAssetIds: [a.usdc.id] })).body.data;
    const open = (client: ApiClient) => client.post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId: a.id, assetId: a.usdc.id });
    // Two anonymous clients opening sessions side by side (each start takes the settlement wallet's
    // row lock to derive its address, so more in parallel would only queue).
    const squatters = [publicClient(t), publicClient(t)];
    const openMany = async (count: number) => {
      const all = [];
      while (all.length < count) all.push(...(await Promise.all(squatters.map(open))));
      return all;
    };
    const before = await openMany(24);
    const payer = (await open(publicClient(t))).body.data;
    expect(payer.status).toBe('AWAITING_PAYMENT');
    const after = await openMany(26);
    // 50 sessions around the payer's, nobody has paid: every one was opened, none holds the payment.
    expect([...before, ...after].map((r) => r.status)).toEqual(Array(50).fill(201));

    // They keep opening while the payment is mined, recorded and confirmed: opened until the
    // recorded payment holds the link's one payment, then refused as busy, then as taken.
    let paid = false;
    const meanwhile: { status: number; message?: string }[] = [];
    const squatting = (async () => {
      while (!paid) {
        const r = await open(squatters[meanwhile.length % 2]);
        meanwhile.push({ status: r.status, message: r.body.error?.message });
      }
    })();
    await fund(a, payer.depositAddress, 'USDC', '2');
    expect(await sessionReaches(publicClient(t), payer, 'PAID', 40_000)).toMatchObject({ amountReceived: '2', redirectUrl: null });
    paid = true;
    await squatting;
    expect(meanwhile.length).toBeGreaterThan(0);
    for (const r of meanwhile) expect([201, 400]).toContain(r.status);
    expect((await m.org.core.get(`/v1/payment/links/${link.id}`)).body.data.paymentsConsumed).toBe(1);
    expect((await m.org.core.get(`/v1/payment/links/${link.id}/checkouts`)).body.total).toBe(51 + meanwhile.filter((r) => r.status === 201).length);

    // The link has taken its payment: no new session, and a payment to a session opened before is not counted.
    const refused = await open(publicClient(t));
    expect(refused.body.error).toMatchObject({ code: 'PAYMENT_FAILED', message: 'This payment link has taken all its payments' });
    const late = before[0].body.data;
    await fund(a, late.depositAddress, 'USDC', '2');
    const extra = await eventually(async () => {
      const list = (await m.org.core.get(`/v1/payment/links/${link.id}/transfers?kind=OVER_LIMIT`)).body.data;
      return list[0]?.status === 'CONFIRMED' && list[0];
    }, 40_000, 100);
    expect(extra).toMatchObject({ checkoutId: late.id, amount: '2', checkoutStatus: 'AWAITING_PAYMENT', notCountedReason: 'The payment link had already taken all its payments' });
    expect((await publicClient(t).get(sessionPath(late))).body.data).toMatchObject({ status: 'AWAITING_PAYMENT', amountReceived: '0', transfersNotCounted: 1, transfers: [{ kind: 'OVER_LIMIT' }] });
    expect((await m.org.core.get(`/v1/payment/links/${link.id}`)).body.data.paymentsConsumed).toBe(1);

    // The API document says which rule applies, on the link and on the public session start.
    const doc = JSON.stringify((await publicClient(t).get('/v1/openapi.json')).body);
    expect(doc).toContain('An open session reserves none: a payment holds one from when it is recorded');
    expect(doc).toContain("A session reserves none of a limited link's payments");
  }, 120_000);

  test("a session is read only under its own link's slug: another link's (another merchant's) is 404 on the API, the QR code and the page", async () => {
    const other = await merchant(t);
    const mine = (await m.org.core.post('/v1/payment/links', { name: 'Mine', currency: 'USD', amount: '1', evmSettlementWalletId: m.wallet.id })).body.data;
    const theirs = (await other.org.core.post('/v1/payment/links', { name: 'Theirs', currency: 'USD', amount: '9', evmSettlementWalletId: other.wallet.id, redirectUrl: 'https://theirs.example/thanks' })).body.data;
    const session = (await publicClient(t).post(`/v1/checkout/links/${theirs.slug}/sessions`, { blockchainId: other.wallet.blockchainId, assetId: other.usdc.id })).body.data;
    const client = publicClient(t);

    expect((await client.get(`/v1/checkout/links/${theirs.slug}/sessions/${session.id}`)).body.data.depositAddress).toBe(session.depositAddress);
    for (const p of [`/v1/checkout/links/${mine.slug}/sessions/${session.id}`, `/v1/checkout/links/${mine.slug}/sessions/${session.id}/qr.svg`, `/v1/checkout/links/${mine.slug.toUpperCase()}/sessions/${session.id}`, `/v1/checkout/links/${mine.slug}/sessions/not-a-uuid`]) {
      const res = await client.get(p);
      expect([p, res.status, res.body.error?.code]).toEqual([p, 404, 'NOT_FOUND']);
      expect(JSON.stringify(res.body)).not.toContain(session.depositAddress);
    }
    // The unbound read is gone.
    const unbound = await client.get(`/v1/checkout/sessions/${session.id}`);
    expect(unbound.status).not.toBe(200);
    expect(JSON.stringify(unbound.body)).not.toContain(session.depositAddress);

    const page = await fetch(`${t.coreUrl}/pay/${mine.slug}?session=${session.id}`);
    expect(page.status).toBe(404);
    const html = await page.text();
    expect(html).not.toContain(session.depositAddress);
    expect((await fetch(`${t.coreUrl}/pay/${theirs.slug}?session=${session.id}`)).status).toBe(200);
    expect((await fetch(`${t.coreUrl}/pay/${mine.slug}?session=nonsense`)).status).toBe(404);
    expect((await fetch(`${t.coreUrl}/pay/${mine.slug}`)).status).toBe(200);
  }, 60_000);
});
