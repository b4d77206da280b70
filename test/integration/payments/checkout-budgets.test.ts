import { PAYMENT_CONFIG, Merchant, merchant, pay, publicClient, sessionPath, startTestKeel, eventually, TestKeel } from './support';

/** A payer behind the proxy: every request says, in X-Forwarded-For, that it comes from `address`. */
function payerAt(t: TestKeel, address: string) {
  const client = publicClient(t);
  const headers = { 'x-forwarded-for': address };
  return {
    get: (path: string) => client.get(path, headers),
    post: (path: string, body?: unknown) => client.post(path, body, headers),
  };
}

async function createLink(m: Merchant, name: string) {
  const res = await m.org.core.post('/v1/payment/links', { name, currency: 'USD', amount: '1', evmSettlementWalletId: m.wallet.id });
  expect(res.status).toBe(201);
  return res.body.data;
}

describe('without TRUST_PROXY the public checkout budgets the peer, whatever X-Forwarded-For says', () => {
  let t: TestKeel;
  beforeAll(async () => {
    t = await startTestKeel({ ...PAYMENT_CONFIG, CHECKOUT_RATE_LIMIT_PER_MINUTE: 3 });
  });
  afterAll(() => t?.stop());

  test('requests naming three different clients share the one budget of the address they come from', async () => {
    expect(t.config.TRUST_PROXY).toBe(false);
    for (const [i, address] of ['198.51.100.1', '198.51.100.2', '2001:db8:7::1'].entries()) {
      const res = await payerAt(t, address).get('/v1/checkout/links/no-such-link');
      expect([res.status, res.headers.get('x-ratelimit-remaining')]).toEqual([404, String(2 - i)]);
    }
    const refused = await payerAt(t, '198.51.100.4').get('/v1/checkout/links/no-such-link');
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 3, remaining: 0 } });
    // Until the client's minute resets: whole seconds, 1 to 60.
    expect(refused.headers.get('retry-after')).toMatch(/^([1-9]|[1-5]\d|60)$/);
  });
});

describe('behind a trusted proxy the public checkout budgets each payer, each /64 and each link', () => {
  let t: TestKeel, m: Merchant;
  beforeAll(async () => {
    t = await startTestKeel({
      ...PAYMENT_CONFIG,
      TRUST_PROXY: ['loopback'],
      CHECKOUT_RATE_LIMIT_PER_MINUTE: 3,
      CHECKOUT_LINK_SESSIONS_PER_MINUTE: 2,
      CHECKOUT_SESSION_READS_PER_MINUTE: 100,
      CHECKOUT_TTL_SECONDS: 30,
      CHECKOUT_LATE_PAYMENT_GRACE_SECONDS: 10,
    });
    m = await merchant(t);
  });
  afterAll(() => t?.stop());

  test("the payer's address from X-Forwarded-For is budgeted, not the proxy's", async () => {
    for (const address of ['198.51.100.10', '198.51.100.11']) {
      for (let i = 0; i < 3; i++) expect((await payerAt(t, address).get('/v1/checkout/links/no-such-link')).status).toBe(404);
      expect((await payerAt(t, address).get('/v1/checkout/links/no-such-link')).status).toBe(429);
    }
    // The proxy's own requests (no X-Forwarded-For) have a budget of their own, untouched.
    const direct = await publicClient(t).get('/v1/checkout/links/no-such-link');
    expect([direct.status, direct.headers.get('x-ratelimit-remaining')]).toEqual([404, '2']);
  });

  test('IPv6 addresses of one /64 share a budget; another /64 has its own', async () => {
    const sameNetwork = ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:abcd:ef01:2345:6789', '2001:db8:1:2::ffff'];
    const answers = [];
    for (const address of sameNetwork) answers.push((await payerAt(t, address).get('/v1/checkout/links/no-such-link')).status);
    expect(answers).toEqual([404, 404, 404, 429]);
    const next = await payerAt(t, '2001:db8:1:3::1').get('/v1/checkout/links/no-such-link');
    expect([next.status, next.headers.get('x-ratelimit-remaining')]).toEqual([404, '2']);
  });

  test("a link whose sessions are used up refuses new ones; another link's payer opens one", async () => {
    const [flooded, quiet] = [await createLink(m, 'Flooded'), await createLink(m, 'Quiet')];
    const body = { blockchainId: m.wallet.blockchainId, assetId: m.usdc.id };
    // Two payers (each well within their own budget) use up the flooded link's two sessions a minute.
    expect((await payerAt(t, '203.0.113.1').post(`/v1/checkout/links/${flooded.slug}/sessions`, body)).status).toBe(201);
    const second = await payerAt(t, '203.0.113.2').post(`/v1/checkout/links/${flooded.slug}/sessions`, body);
    expect([second.status, second.headers.get('x-ratelimit-remaining')]).toEqual([201, '0']);
    const third = await payerAt(t, '203.0.113.3').post(`/v1/checkout/links/${flooded.slug}/sessions`, body);
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 2, remaining: 0 } });
    // The third payer's own budget is not used up: it opens a session of the other link.
    const other = await payerAt(t, '203.0.113.3').post(`/v1/checkout/links/${quiet.slug}/sessions`, body);
    expect(other.status).toBe(201);
    // And the flooded link's open sessions are still read.
    expect((await payerAt(t, '203.0.113.2').get(sessionPath(second.body.data))).status).toBe(200);
  });

  test("no one client keeps a link's payers out: a refused body spends none of the link's sessions, and a client opens at most its share of them", async () => {
    const link = await createLink(m, 'Contested');
    const path = `/v1/checkout/links/${link.slug}/sessions`;
    const body = { blockchainId: m.wallet.blockchainId, assetId: m.usdc.id };
    // A client sends bodies the link refuses, as many as its own budget (3) lets it: each is 422, and no session opens.
    const refused = [];
    for (let i = 0; i < 3; i++) refused.push((await payerAt(t, '203.0.113.60').post(path, { blockchainId: m.wallet.blockchainId })).status);
    expect(refused).toEqual([422, 422, 422]);
    // A client opening sessions opens its share of the link's (half of its 2 a minute) and no more.
    expect((await payerAt(t, '203.0.113.61').post(path, body)).status).toBe(201);
    const beyondShare = await payerAt(t, '203.0.113.61').post(path, body);
    expect(beyondShare.status).toBe(429);
    expect(beyondShare.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 1, remaining: 0 } });
    // So the link still has a session for a payer; its headers name the tightest budget it spent.
    const payer = await payerAt(t, '203.0.113.62').post(path, body);
    expect([payer.status, payer.headers.get('x-ratelimit-limit'), payer.headers.get('x-ratelimit-remaining')]).toEqual([201, '1', '0']);
    // Two sessions opened: the link's budget is used up, for every payer alike.
    const next = await payerAt(t, '203.0.113.63').post(path, body);
    expect(next.status).toBe(429);
    expect(next.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 2, remaining: 0 } });
  });

  test("the page's polling does not spend its payer's budget: reads have an allowance of their own", async () => {
    const link = await createLink(m, 'Polled');
    const payer = payerAt(t, '203.0.113.50');
    // What the page's script does: the link's terms, a session, its QR code, then a read a second.
    expect((await payer.get(`/v1/checkout/links/${link.slug}`)).status).toBe(200);
    const session = (await payer.post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId: m.wallet.blockchainId, assetId: m.usdc.id })).body.data;
    expect((await payer.get(session.qrCodeUrl)).status).toBe(200);
    for (let i = 0; i < 30; i++) {
      const read = await payer.get(sessionPath(session));
      expect([read.status, read.body.data.status, read.headers.get('x-ratelimit-limit')]).toEqual([200, 'AWAITING_PAYMENT', '100']);
    }
    // Ten times the budget read, and the budget (3) still has the request left for a reload of the page.
    const reload = await payer.get(`/pay/${link.slug}`);
    expect([reload.status, reload.headers.get('x-ratelimit-limit'), reload.headers.get('x-ratelimit-remaining')]).toEqual([200, '3', '0']);
    // The read allowance is a budget too: a client reading beyond it is refused.
    const reader = payerAt(t, '203.0.113.51');
    const statuses = [];
    for (let i = 0; i < 101; i++) statuses.push((await reader.get(sessionPath(session))).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses[100]).toBe(429);
  });

  test('after its expiry a checkout address still records a late payment within the grace, then leaves the deposit watcher', async () => {
    const link = await createLink(m, 'Late');
    const body = { blockchainId: m.wallet.blockchainId, assetId: m.usdc.id };
    // The page's payer, reading its session once a second as the page does.
    const payer = payerAt(t, '203.0.113.90');
    const read = async (id: string) => (await payer.get(sessionPath({ id, link }))).body.data;
    const late = (await payer.post(`/v1/checkout/links/${link.slug}/sessions`, body)).body.data;
    const db = t.keel.platform.db;
    const addressOf = async (sessionId: string) => (await db('checkouts').where({ id: sessionId }).first('addressId', 'addressRetiredAt'));
    const watched = async () => t.keel.services.watchedWallets.on(m.wallet.blockchainId);
    expect((await watched()).has(late.depositAddress.toLowerCase())).toBe(true);

    await eventually(async () => (await read(late.id)).status === 'EXPIRED', 45_000, 1_000);
    // Paid after the expiry (its block's time is past it) but within the 10 s grace: recorded as LATE, not counted.
    await pay(m, late.depositAddress, '1');
    const transfer = await eventually(async () => {
      const s = await read(late.id);
      return s.transfers.length === 1 && s.transfers[0].status === 'CONFIRMED' && s;
    }, 30_000, 1_000);
    expect(transfer).toMatchObject({ status: 'EXPIRED', amountReceived: '0', transfers: [{ kind: 'LATE', amount: '1' }] });

    // Past the expiry and the grace, with nothing in flight: deactivated and no longer watched.
    const { addressId } = await addressOf(late.id);
    await eventually(async () => (await addressOf(late.id)).addressRetiredAt !== null, 30_000, 200);
    expect((await m.org.core.get(`/v1/addresses/${addressId}`)).body.data.isActive).toBe(false);
    expect((await watched()).has(late.depositAddress.toLowerCase())).toBe(false);
    // A live checkout opened meanwhile (by another payer: this one opened its share of the link this minute) is still watched.
    const live = (await payerAt(t, '203.0.113.91').post(`/v1/checkout/links/${link.slug}/sessions`, body)).body.data;
    expect((await watched()).has(live.depositAddress.toLowerCase())).toBe(true);
    expect((await addressOf(live.id)).addressRetiredAt).toBeNull();
  }, 120_000);
});
