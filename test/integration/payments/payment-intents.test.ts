import { randomUUID } from 'node:crypto';
import { Merchant, pay, paymentWorld, received, eventually, WebhookReceiver, TestKeel } from './support';

describe('payment intents through every status', () => {
  const world = paymentWorld(['payment_intent.*']);
  let t: TestKeel, m: Merchant, other: Merchant, hooks: WebhookReceiver;
  beforeAll(() => {
    ({ t, m, other, hooks } = world);
  });

  async function create(body: Record<string, unknown>, headers?: Record<string, string>) {
    return m.org.core.post('/v1/payment/intents', { amount: '20', assetId: m.usdc.id, masterWalletId: m.wallet.id, ...body }, headers);
  }

  async function reaches(id: string, status: string) {
    return eventually(async () => {
      const res = await m.org.core.get(`/v1/payment/intents/${id}`);
      return res.body.data?.status === status && res.body.data;
    }, 30_000, 100);
  }

  /** The types of the events delivered for one intent, in order, once `last` has arrived. */
  async function eventsOf(id: string, last: string) {
    return eventually(() => {
      const mine = received(hooks).filter((e) => e.data.paymentIntentId === id);
      return mine.some((e) => e.type === last) && mine;
    });
  }

  test('REQUIRES_PAYMENT → PROCESSING → SUCCEEDED, created once under an Idempotency-Key, with an event per transition', async () => {
    const key = randomUUID();
    const first = await create({ description: 'Order 1001', metadata: { orderId: 1001 } }, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    const intent = first.body.data;
    expect(intent).toMatchObject({ status: 'REQUIRES_PAYMENT', checkoutStatus: 'AWAITING_PAYMENT', amount: '20', amountDue: '20', asset: { id: m.usdc.id, symbol: 'USDC' }, masterWalletId: m.wallet.id, description: 'Order 1001', metadata: { orderId: 1001 }, transfers: [] });
    const replay = await create({ description: 'Order 1001', metadata: { orderId: 1001 } }, { 'Idempotency-Key': key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.id).toBe(intent.id);
    expect((await m.org.core.get(`/v1/payment/intents?status=REQUIRES_PAYMENT`)).body.data.filter((i: any) => i.description === 'Order 1001')).toHaveLength(1);

    const txHash = await pay(m, intent.depositAddress, '20');
    const done = await reaches(intent.id, 'SUCCEEDED');
    expect(done).toMatchObject({ checkoutStatus: 'PAID', amountReceived: '20', amountDue: '0', transfers: [{ txHash, kind: 'PAYMENT', status: 'CONFIRMED', amount: '20' }] });
    expect(done.paidAt).toEqual(expect.any(String));

    const events = await eventsOf(intent.id, 'payment_intent.succeeded');
    expect(events.map((e) => e.type)).toEqual(['payment_intent.created', 'payment_intent.processing', 'payment_intent.succeeded']);
    expect(events[0].data).toMatchObject({ paymentIntentId: intent.id, id: intent.id, status: 'REQUIRES_PAYMENT', amount: '20', depositAddress: intent.depositAddress, asset: { symbol: 'USDC' }, blockchain: { id: m.wallet.blockchainId }, metadata: { orderId: 1001 } });
    expect(events[2].data).toMatchObject({ status: 'SUCCEEDED', amountReceived: '20', transfers: [{ txHash, status: 'CONFIRMED' }] });
  }, 60_000);

  test('UNDERPAID then CANCELLED, OVERPAID, and EXPIRED with a late payment that is not counted', async () => {
    const under = (await create({ amount: '10' })).body.data;
    const over = (await create({ amount: '1' })).body.data;
    const expiring = (await create({ amount: '2', expiresInSeconds: 5 })).body.data;
    const untouched = (await create({ amount: '3' })).body.data;

    await pay(m, under.depositAddress, '2.5');
    await pay(m, over.depositAddress, '1.25');
    expect(await reaches(under.id, 'UNDERPAID')).toMatchObject({ amountReceived: '2.5', amountDue: '7.5' });
    expect(await reaches(over.id, 'OVERPAID')).toMatchObject({ amountReceived: '1.25', amountOverpaid: '0.25' });

    const cancelled = await m.org.core.post(`/v1/payment/intents/${under.id}/cancel`, { reason: 'refunding the 2.5 by hand' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({ status: 'CANCELLED', cancellationReason: 'refunding the 2.5 by hand', amountReceived: '2.5' });
    const notAgain = await m.org.core.post(`/v1/payment/intents/${over.id}/cancel`, {});
    expect(notAgain.status).toBe(409);
    expect(notAgain.body.error.code).toBe('CONFLICT');
    expect((await m.org.core.post(`/v1/payment/intents/${untouched.id}/cancel`)).body.data.status).toBe('CANCELLED');

    await reaches(expiring.id, 'EXPIRED');
    await pay(m, expiring.depositAddress, '2');
    const late = await eventually(async () => {
      const res = await m.org.core.get(`/v1/payment/intents/${expiring.id}`);
      return res.body.data.transfers[0]?.status === 'CONFIRMED' && res.body.data;
    }, 30_000, 100);
    expect(late).toMatchObject({ status: 'EXPIRED', amountReceived: '0', transfers: [{ kind: 'LATE', amount: '2', notCountedReason: 'Mined after the checkout expired' }] });

    expect((await eventsOf(under.id, 'payment_intent.cancelled')).map((e) => e.type)).toEqual(['payment_intent.created', 'payment_intent.processing', 'payment_intent.underpaid', 'payment_intent.cancelled']);
    expect((await eventsOf(over.id, 'payment_intent.overpaid')).map((e) => e.type)).toEqual(['payment_intent.created', 'payment_intent.processing', 'payment_intent.overpaid']);
    expect((await eventsOf(expiring.id, 'payment_intent.expired')).map((e) => e.type)).toEqual(['payment_intent.created', 'payment_intent.expired']);
    expect((await eventsOf(untouched.id, 'payment_intent.cancelled')).map((e) => e.type)).toEqual(['payment_intent.created', 'payment_intent.cancelled']);

    const listed = (await m.org.core.get(`/v1/payment/intents?status=CANCELLED&masterWalletId=${m.wallet.id}`)).body;
    expect(listed.data.map((i: any) => i.id).sort()).toEqual([under.id, untouched.id].sort());
  }, 90_000);

  test('a top-up mined before an underpaid intent is cancelled but recorded after is LATE, and says it was the cancellation, not the expiry', async () => {
    const intent = (await create({ amount: '10' })).body.data;
    await pay(m, intent.depositAddress, '2.5');
    await reaches(intent.id, 'UNDERPAID');
    // The deposit watcher records a chain's blocks under its cursor's row lock: held here, the top-up
    // is mined (in time, before the cancellation) but not recorded until the intent is cancelled.
    const { db } = t.keel.platform;
    const cursor = await db.transaction();
    let topUp: string;
    try {
      await cursor('chain_cursors').where({ blockchainId: m.wallet.blockchainId }).forUpdate().first();
      topUp = await pay(m, intent.depositAddress, '7.5');
      const cancelled = await m.org.core.post(`/v1/payment/intents/${intent.id}/cancel`, { reason: 'out of stock' });
      expect(cancelled.body.data).toMatchObject({ status: 'CANCELLED', amountReceived: '2.5', transfers: [{ kind: 'PAYMENT' }] });
    } finally {
      await cursor.rollback();
    }
    const recorded = await eventually(async () => {
      const data = (await m.org.core.get(`/v1/payment/intents/${intent.id}`)).body.data;
      return data.transfers.length === 2 && data;
    }, 30_000, 100);
    expect(recorded).toMatchObject({
      status: 'CANCELLED',
      amountReceived: '2.5',
      transfers: [{ kind: 'PAYMENT', amount: '2.5' }, { txHash: topUp, kind: 'LATE', amount: '7.5', notCountedReason: 'The checkout was cancelled before this payment was recorded' }],
    });
  }, 60_000);

  test('an amount is asked for in base units within uint256: the largest is a payable request, one base unit more is 422 "is too large"', async () => {
    const dai = (await m.org.core.get(`/v1/assets?blockchainId=${m.wallet.blockchainId}&symbol=DAI`)).body.data[0];
    const largest = 2n ** 256n - 1n;
    const inDai = (units: bigint) => `${units / 10n ** 18n}.${(units % 10n ** 18n).toString().padStart(18, '0')}`;
    const fits = await create({ assetId: dai.id, amount: inDai(largest) });
    expect(fits.status).toBe(201);
    expect(fits.body.data.paymentUri).toMatch(new RegExp(`&uint256=${largest}$`));
    const over = await create({ assetId: dai.id, amount: inDai(largest + 1n) });
    expect([over.status, over.body.error.details.fields]).toEqual([422, [{ field: 'amount', error: 'is too large' }]]);
  });

  test('validation, and another organisation gets 404 for every intent of this one', async () => {
    const intent = (await create({ amount: '1' })).body.data;
    for (const [method, path] of [['GET', `/v1/payment/intents/${intent.id}`], ['POST', `/v1/payment/intents/${intent.id}/cancel`]]) {
      const res = await other.org.core.request(method, path, method === 'POST' ? { body: {} } : {});
      expect([path, res.status, res.body.error?.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
    expect((await other.org.core.get('/v1/payment/intents')).body.total).toBe(0);
    const foreignWallet = await other.org.core.post('/v1/payment/intents', { amount: '1', assetId: m.usdc.id, masterWalletId: m.wallet.id });
    expect(foreignWallet.status).toBe(404);
    expect((await create({ amount: '1.0000001' })).body.error.details.fields[0].field).toBe('amount');
    expect((await create({ assetId: randomUUID() })).body.error.details.fields[0].field).toBe('assetId');
    expect((await create({ expiresInSeconds: 1 })).status).toBe(422);
    expect((await m.org.core.get('/v1/payment/intents/nope')).status).toBe(404);
  }, 30_000);
});
