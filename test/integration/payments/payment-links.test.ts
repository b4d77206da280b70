import { PAYMENT_CONFIG, Merchant, pay, paymentWorld, publicClient, received, sessionPath, sessionReaches, startTestKeel, eventually, WebhookReceiver, TestKeel } from './support';

describe('payment links paid end to end on the dev chain through the API', () => {
  const world = paymentWorld(['payment_link.*', 'payment_link_transfer.*']);
  let t: TestKeel, m: Merchant, other: Merchant, hooks: WebhookReceiver;
  beforeAll(() => {
    ({ t, m, other, hooks } = world);
  });

  async function createLink(body: Record<string, unknown>, owner = m) {
    const res = await owner.org.core.post('/v1/payment/links', { name: 'Coffee beans', currency: 'USD', evmSettlementWalletId: owner.wallet.id, ...body });
    expect(res.status).toBe(201);
    return res.body.data;
  }

  async function startSession(slug: string, body: Record<string, unknown> = {}) {
    const res = await publicClient(t).post(`/v1/checkout/links/${slug}/sessions`, { blockchainId: m.wallet.blockchainId, assetId: m.usdc.id, ...body });
    expect(res.status).toBe(201);
    return res.body.data;
  }

  test('a fixed-amount link: created with every field, paid through the public checkout, recorded as a payment-link transfer, swept to the settlement wallet, with the spec events', async () => {
    const link = await createLink({
      slug: 'coffee-beans-1kg',
      description: 'One kilogram, whole beans',
      amount: '12.5',
      paymentLimit: 5,
      redirectUrl: 'https://shop.example/thanks',
      successMessage: 'Thanks, your beans are on their way',
      failureMessage: 'The payment did not complete',
      metadata: { sku: 'BEANS-1KG' },
      imgUrl: 'https://shop.example/beans.png',
      channel: 'email',
    });
    expect(link).toMatchObject({
      slug: 'coffee-beans-1kg',
      currency: 'USD',
      amount: '12.5',
      paymentLimit: 5,
      paymentsConsumed: 0,
      isActive: true,
      channel: 'email',
      evmSettlementWalletId: m.wallet.id,
      solanaSettlementWalletId: null,
      metadata: { sku: 'BEANS-1KG' },
      checkoutUrl: '/pay/coffee-beans-1kg',
      expiresAt: null,
    });
    expect(link.refId).toMatch(/^[0-9a-f-]{36}$/);
    expect(link.allowedBlockchains.map((b: { id: string }) => b.id)).toEqual([m.wallet.blockchainId]);
    expect(link.allowedAssets.map((a: { symbol: string }) => a.symbol).sort()).toEqual(['DAI', 'USDC', 'USDT']);
    expect((await m.org.core.get(`/v1/payment-links/${link.id}`)).body.data).toEqual(link);
    expect((await m.org.core.get(`/v1/payment/links-by-slug/coffee-beans-1kg`)).body.data.id).toBe(link.id);
    expect((await m.org.core.get(`/v1/master-wallets/${m.wallet.id}`)).body.data.analytics.paymentLinksCount).toBe(1);

    // The public view: the link's terms and nothing of the merchant behind it.
    const pub = await publicClient(t).get('/v1/checkout/links/coffee-beans-1kg');
    expect(pub.status).toBe(200);
    expect(pub.headers.get('x-ratelimit-limit')).toBe(String(PAYMENT_CONFIG.CHECKOUT_RATE_LIMIT_PER_MINUTE));
    expect(pub.body.data).toMatchObject({ slug: 'coffee-beans-1kg', name: 'Coffee beans', amount: '12.5', currency: 'USD', available: true });
    const shown = JSON.stringify(pub.body.data);
    for (const secret of [m.org.orgId, m.wallet.id, m.wallet.walletAddress, 'BEANS-1KG', link.refId]) expect(shown).not.toContain(secret);

    const session = await startSession('coffee-beans-1kg');
    expect(session).toMatchObject({ status: 'AWAITING_PAYMENT', amount: '12.5', amountDue: '12.5', asset: { symbol: 'USDC', decimals: 6 }, redirectUrl: null });
    expect(session.depositAddress).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(session.depositAddress).not.toBe(m.wallet.walletAddress);
    expect(session.paymentUri).toBe(`ethereum:${m.usdc.address}@${session.blockchain.chainId}/transfer?address=${session.depositAddress}&uint256=12500000`);
    const qr = await fetch(`${t.coreUrl}${session.qrCodeUrl}`);
    expect(qr.headers.get('content-type')).toContain('image/svg+xml');
    expect(await qr.text()).toMatch(/^<svg/);
    expect(new Date(session.expiresAt).getTime() - Date.now()).toBeGreaterThan(800_000);

    const txHash = await pay(m, session.depositAddress, '12.5');
    const paid = await sessionReaches(publicClient(t), session, 'PAID');
    expect(paid).toMatchObject({ amountReceived: '12.5', amountDue: '0', redirectUrl: 'https://shop.example/thanks', message: 'Thanks, your beans are on their way' });
    expect(paid.transfers).toEqual([{ txHash, amount: '12.5', asset: expect.objectContaining({ id: m.usdc.id, symbol: 'USDC' }), blockchain: expect.objectContaining({ id: m.wallet.blockchainId }), kind: 'PAYMENT', status: 'CONFIRMED', confirmations: 3, requiredConfirmations: 3 }]);

    const transfers = (await m.org.core.get(`/v1/payment/links/${link.id}/transfers`)).body;
    expect(transfers.total).toBe(1);
    expect(transfers.data[0]).toMatchObject({ paymentLinkId: link.id, checkoutId: session.id, kind: 'PAYMENT', status: 'CONFIRMED', txHash, amount: '12.5', rawAmount: '12500000', to: session.depositAddress, checkoutStatus: 'PAID' });
    expect((await m.org.core.get(`/v1/payment/links/${link.id}`)).body.data.paymentsConsumed).toBe(1);

    // The events, each with its data shape.
    const events = await eventually(() => {
      const got = received(hooks).filter((e) => e.type === 'payment_link.created' || e.data.paymentLinkId === link.id);
      return got.some((e) => e.type === 'payment_link.updated') && got.length >= 4 && got;
    });
    const created = events.find((e) => e.type === 'payment_link.created' && e.data.paymentLinkId === link.id)!;
    expect(created.data).toEqual({
      paymentLinkId: link.id,
      name: 'Coffee beans',
      slug: 'coffee-beans-1kg',
      amount: '12.5',
      currency: 'USD',
      redirectUrl: 'https://shop.example/thanks',
      isActive: true,
      expiresAt: null,
      paymentLimit: 5,
      paymentsConsumed: 0,
      masterWallet: { id: m.wallet.id, name: 'Shop treasury', walletAddress: m.wallet.walletAddress },
    });
    const transferCreated = events.find((e) => e.type === 'payment_link_transfer.created')!;
    expect(transferCreated.data).toMatchObject({ paymentLinkId: link.id, kind: 'PAYMENT', status: 'CONFIRMING', confirmations: 2, requiredConfirmations: 3, txHash, amount: '12.5', paymentLink: { id: link.id, slug: 'coffee-beans-1kg' }, checkout: { id: session.id, status: 'CONFIRMING' } });
    const transferUpdated = events.find((e) => e.type === 'payment_link_transfer.updated')!;
    expect(transferUpdated.data).toMatchObject({ id: transferCreated.data.id, status: 'CONFIRMED', confirmations: 3, checkout: { status: 'PAID' } });
    expect(events.find((e) => e.type === 'payment_link.updated')!.data).toMatchObject({ paymentLinkId: link.id, paymentsConsumed: 1 });

    // The funds land in the settlement wallet: swept from the checkout address (gas from the wallet).
    await eventually(async () => {
      const balances = (await m.org.core.get(`/v1/master-wallets/${m.wallet.id}/balances`)).body.data;
      return balances.find((b: any) => b.asset.symbol === 'USDC')?.balance === '12.5';
    }, 40_000, 250);

    // A second payment to the spent address: recorded as a REPEAT, not a second payment.
    await pay(m, session.depositAddress, '1');
    const repeat = await eventually(async () => {
      const list = (await m.org.core.get(`/v1/payment/links/${link.id}/transfers?kind=REPEAT`)).body;
      return list.data[0]?.status === 'CONFIRMED' && list.data[0];
    }, 30_000, 100);
    expect(repeat).toMatchObject({ kind: 'REPEAT', amount: '1', checkoutStatus: 'PAID' });
    expect((await publicClient(t).get(sessionPath(session))).body.data).toMatchObject({ status: 'PAID', amountReceived: '12.5' });
    expect((await m.org.core.get(`/v1/payment/links/${link.id}`)).body.data.paymentsConsumed).toBe(1);
  }, 120_000);

  test('under-, over- and late payments are each recorded, visible and counted as documented', async () => {
    const open = await createLink({ name: 'Tip jar' });
    expect(open.amount).toBeNull();
    const missing = await publicClient(t).post(`/v1/checkout/links/${open.slug}/sessions`, { blockchainId: m.wallet.blockchainId, assetId: m.usdc.id });
    expect(missing.status).toBe(422);
    expect(missing.body.error.code).toBe('MISSING_FIELD');
    // More than a chain can carry is the payer's mistake: 422 naming the amount, never a 500.
    const huge = await publicClient(t).post(`/v1/checkout/links/${open.slug}/sessions`, { blockchainId: m.wallet.blockchainId, assetId: m.usdc.id, amount: `1${'0'.repeat(89)}` });
    expect(huge.status).toBe(422);
    expect(huge.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual(['amount']);
    const under = await startSession(open.slug, { amount: '10' });
    const over = await startSession(open.slug, { amount: '5' });
    const soon = await createLink({ name: 'Flash sale', amount: '3', expiresAt: new Date(Date.now() + 4_000).toISOString() });
    const late = await startSession(soon.slug);
    expect(new Date(late.expiresAt).getTime()).toBe(new Date(soon.expiresAt).getTime());

    await pay(m, under.depositAddress, '4');
    await pay(m, over.depositAddress, '7');
    const underpaid = await sessionReaches(publicClient(t), under, 'UNDERPAID');
    expect(underpaid).toMatchObject({ amountReceived: '4', amountDue: '6', redirectUrl: null, message: null });
    const overpaid = await sessionReaches(publicClient(t), over, 'OVERPAID');
    expect(overpaid).toMatchObject({ amountReceived: '7', amountDue: '0', amountOverpaid: '2', redirectUrl: null });

    // The underpaid checkout takes a top-up to the same address until its expiry.
    await pay(m, under.depositAddress, '6');
    expect(await sessionReaches(publicClient(t), under, 'PAID')).toMatchObject({ amountReceived: '10', amountDue: '0' });
    expect((await m.org.core.get(`/v1/payment/links/${open.id}`)).body.data.paymentsConsumed).toBe(2);

    // After the expiry: the session is EXPIRED, a new one is refused, and a payment is LATE.
    await sessionReaches(publicClient(t), late, 'EXPIRED');
    const refused = await publicClient(t).post(`/v1/checkout/links/${soon.slug}/sessions`, { blockchainId: m.wallet.blockchainId, assetId: m.usdc.id });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('PAYMENT_EXPIRED');
    expect((await publicClient(t).get(`/v1/checkout/links/${soon.slug}`)).body.data).toMatchObject({ available: false, unavailableReason: 'This payment link has expired' });
    await pay(m, late.depositAddress, '3');
    const lateTransfer = await eventually(async () => (await m.org.core.get(`/v1/payment/links/${soon.id}/transfers`)).body.data[0], 30_000, 100);
    expect(lateTransfer).toMatchObject({ kind: 'LATE', amount: '3', checkoutStatus: 'EXPIRED' });
    expect((await publicClient(t).get(sessionPath(late))).body.data).toMatchObject({ status: 'EXPIRED', amountReceived: '0', message: null });
    expect((await m.org.core.get(`/v1/payment/links/${soon.id}`)).body.data.paymentsConsumed).toBe(0);

    const checkouts = (await m.org.core.get(`/v1/payment/links/${open.id}/checkouts`)).body;
    expect(checkouts.data.map((c: any) => [c.id, c.status]).sort()).toEqual([[under.id, 'PAID'], [over.id, 'OVERPAID']].sort());
  }, 120_000);

  test('an open session reserves none of a limited link\'s payments, a paid one consumes it; deactivated and deleted links take no checkout', async () => {
    const link = await createLink({ name: 'One-off', amount: '2', paymentLimit: 1 });
    const first = await startSession(link.slug);
    // Another payer still gets a session: nobody has paid yet.
    await startSession(link.slug);
    await pay(m, first.depositAddress, '2');
    await sessionReaches(publicClient(t), first, 'PAID');
    const spent = await publicClient(t).post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId: m.wallet.blockchainId, assetId: m.usdc.id });
    expect(spent.status).toBe(400);
    expect(spent.body.error).toMatchObject({ code: 'PAYMENT_FAILED', message: 'This payment link has taken all its payments', details: { paymentLimit: 1, paymentsConsumed: 1 } });
    // Raising the limit makes the link available again.
    expect((await m.org.core.request('PUT', `/v1/payment/links/${link.id}`, { body: { paymentLimit: 2 } })).body.data).toMatchObject({ paymentLimit: 2, paymentsConsumed: 1 });
    expect((await publicClient(t).get(`/v1/checkout/links/${link.slug}`)).body.data.available).toBe(true);

    const other = await createLink({ name: 'Paused', amount: '1' });
    expect((await m.org.core.post(`/v1/payment/links/${other.id}/deactivate`)).body.data.isActive).toBe(false);
    const inactive = await publicClient(t).post(`/v1/checkout/links/${other.slug}/sessions`, { blockchainId: m.wallet.blockchainId, assetId: m.usdc.id });
    expect(inactive.body.error.code).toBe('PAYMENT_FAILED');
    const deleted = await m.org.core.request('DELETE', `/v1/payment/links/${other.id}`);
    expect(deleted.status).toBe(200);
    expect((await m.org.core.get(`/v1/payment/links/${other.id}`)).status).toBe(404);
    expect((await publicClient(t).get(`/v1/checkout/links/${other.slug}`)).status).toBe(404);
    expect((await publicClient(t).get(`/pay/${other.slug}`)).status).toBe(200); // the page loads, then says the link does not exist
    await eventually(() => received(hooks).some((e) => e.type === 'payment_link.deleted' && e.data.paymentLinkId === other.id));
  }, 60_000);

  test('a checkout of a limited link holds its payment while a recorded payment confirms and while an underpaid session may be topped up, never for an unpaid session', async () => {
    const link = await createLink({ name: 'Held while paying', amount: '2', paymentLimit: 1 });
    const first = await startSession(link.slug);
    const { db } = t.keel.platform;
    const newSession = () => publicClient(t).post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId: m.wallet.blockchainId, assetId: m.usdc.id });
    // Seen at the chain head but not recorded: nothing held.
    await db('checkouts').where({ id: first.id }).update({ status: 'DETECTED', seenRaw: '2000000' });
    expect((await newSession()).status).toBe(201);
    // A recorded payment confirming holds it whatever the clock says.
    await db('checkouts').where({ id: first.id }).update({ expiresAt: new Date(Date.now() - 3_600_000), status: 'CONFIRMING', confirmingRaw: '2000000' });
    const busy = await newSession();
    expect(busy.body.error).toMatchObject({ code: 'PAYMENT_FAILED', message: 'Every remaining payment of this link is being paid; try again later', details: { paymentLimit: 1, paymentsConsumed: 0 } });
    // Underpaid and just expired: a top-up mined in time may still be recorded.
    await db('checkouts').where({ id: first.id }).update({ expiresAt: new Date(Date.now() - 60_000), status: 'UNDERPAID', confirmingRaw: '0', receivedRaw: '1000000' });
    expect((await newSession()).status).toBe(400);
    // Long expired, underpaid or unpaid: the payment is free again.
    await db('checkouts').where({ id: first.id }).update({ expiresAt: new Date(Date.now() - 3_600_000) });
    expect((await newSession()).status).toBe(201);
  });

  test("a chain the settlement wallet is not watched on takes no checkout (intent or session) and leaves the link's options; the wallet stays watched there while checkouts there are open", async () => {
    const [chainA, chainB] = (await m.org.core.get('/v1/blockchains')).body.data.map((c: { id: string }) => c.id);
    const created = await m.org.core.post('/v1/master-wallets', { blockchainId: chainA, name: 'Two-chain till', configurations: { enableMultiChain: true } });
    const wallet = created.body.data;
    const usdcB = (await m.org.core.get(`/v1/assets?blockchainId=${chainB}&symbol=USDC`)).body.data[0];
    const link = await createLink({ name: 'Two chains', amount: '3', evmSettlementWalletId: wallet.id });
    expect(link.allowedBlockchains.map((b: { id: string }) => b.id)).toEqual(expect.arrayContaining([chainA, chainB]));
    const { db } = t.keel.platform;
    const retire = (checkoutId: string) => db('checkouts').where({ id: checkoutId }).update({ addressRetiredAt: new Date() });
    const optionChains = async () => (await publicClient(t).get(`/v1/checkout/links/${link.slug}`)).body.data.options.map((o: { blockchain: { id: string } }) => o.blockchain.id);
    const sessionOn = (blockchainId: string, assetId: string) => publicClient(t).post(`/v1/checkout/links/${link.slug}/sessions`, { blockchainId, assetId });
    const intentOnB = () => m.org.core.post('/v1/payment/intents', { amount: '3', assetId: usdcB.id, masterWalletId: wallet.id });
    expect((await optionChains()).sort()).toEqual([chainA, chainB].sort());

    // A session open on B: its address is watched until it is retired, so monitoring stays on there
    // (neither turned off, nor the chain dropped, nor the wallet deactivated) until then.
    const openOnB = await startSession(link.slug, { blockchainId: chainB, assetId: usdcB.id });
    const off = await m.org.core.post(`/v1/master-wallets/${wallet.id}/monitoring/${chainB}/disable`);
    expect(off.status).toBe(409);
    expect(off.body.error).toMatchObject({ code: 'CONFLICT', details: { total: 1, openCheckouts: [{ id: openOnB.id, blockchainId: chainB, paymentLinkId: link.id, paymentIntentId: null }] } });
    expect((await m.org.core.request('PATCH', `/v1/master-wallets/${wallet.id}`, { body: { configurations: { enableMultiChain: false } } })).body.error.code).toBe('CONFLICT');
    expect((await m.org.core.request('PATCH', `/v1/master-wallets/${wallet.id}`, { body: { isActive: false } })).body.error.code).toBe('CONFLICT');
    // A chain this deployment no longer serves (taken out of KEEL_CHAINS) holds nothing: no payment
    // can be recorded there, and its checkouts are never retired.
    const networks = t.keel.services.networks;
    const serving = networks.port.bind(networks);
    const notServingB = jest.spyOn(networks, 'port').mockImplementation((id: string) => (id === chainB ? undefined : serving(id)));
    try {
      expect((await m.org.core.post(`/v1/master-wallets/${wallet.id}/monitoring/${chainB}/disable`)).status).toBe(200);
    } finally {
      notServingB.mockRestore();
    }
    expect((await m.org.core.post(`/v1/master-wallets/${wallet.id}/monitoring/${chainB}/enable`)).status).toBe(200);
    await retire(openOnB.id);

    // Monitoring off on B: a payment there would never be recorded, so nothing can ask for one.
    expect((await m.org.core.post(`/v1/master-wallets/${wallet.id}/monitoring/${chainB}/disable`)).status).toBe(200);
    const intent = await intentOnB();
    expect([intent.status, intent.body.error?.code]).toEqual([400, 'INVALID_NETWORK']);
    const session = await sessionOn(chainB, usdcB.id);
    expect([session.status, session.body.error?.code]).toEqual([400, 'PAYMENT_FAILED']);
    expect(await optionChains()).toEqual([chainA]);
    const onA = await startSession(link.slug, { blockchainId: chainA, assetId: m.usdc.id });

    // enableMultiChain off drops B (the link still names it): the same. A's open session does not hold B.
    expect((await m.org.core.request('PATCH', `/v1/master-wallets/${wallet.id}`, { body: { configurations: { enableMultiChain: false } } })).status).toBe(200);
    expect((await intentOnB()).status).toBe(400);
    expect((await sessionOn(chainB, usdcB.id)).body.error?.code).toBe('PAYMENT_FAILED');
    expect(await optionChains()).toEqual([chainA]);

    // A deactivated wallet is watched nowhere: no checkout at all, once A's session has ended.
    expect((await m.org.core.request('PATCH', `/v1/master-wallets/${wallet.id}`, { body: { isActive: false } })).body.error.details.openCheckouts[0].id).toBe(onA.id);
    await retire(onA.id);
    expect((await m.org.core.request('PATCH', `/v1/master-wallets/${wallet.id}`, { body: { isActive: false } })).status).toBe(200);
    expect((await sessionOn(chainA, m.usdc.id)).body.error?.code).toBe('PAYMENT_FAILED');
    expect(await optionChains()).toEqual([]);
  }, 60_000);

  test('a paymentLimit cannot be lowered below the payments consumed and those being paid', async () => {
    const link = await createLink({ name: 'Two prints', amount: '2', paymentLimit: 2 });
    const [one, two] = [await startSession(link.slug), await startSession(link.slug)];
    const { db } = t.keel.platform;
    await db('checkouts').whereIn('id', [one.id, two.id]).update({ status: 'CONFIRMING', confirmingRaw: '2000000' });
    const lowered = await m.org.core.request('PUT', `/v1/payment/links/${link.id}`, { body: { paymentLimit: 1 } });
    expect(lowered.status).toBe(422);
    expect(lowered.body.error.details.fields).toEqual([expect.objectContaining({ field: 'paymentLimit' })]);
    // One of them no longer paying: its payment is free, and the limit may come down to the other.
    await db('checkouts').where({ id: two.id }).update({ status: 'AWAITING_PAYMENT', confirmingRaw: '0' });
    expect((await m.org.core.request('PUT', `/v1/payment/links/${link.id}`, { body: { paymentLimit: 1 } })).body.data).toMatchObject({ paymentLimit: 1 });
  });

  test('a limit set while a payment to an unlimited link is being recorded counts that payment: the link never goes one payment over', async () => {
    const link = await createLink({ name: 'Open edition', amount: '2' });
    const [confirming, recording] = [await startSession(link.slug), await startSession(link.slug)];
    const { db } = t.keel.platform;
    const desk = t.keel.services.checkouts;
    await db('checkouts').where({ id: confirming.id }).update({ status: 'CONFIRMING', confirmingRaw: '2000000' });
    // The deposit watcher's transaction records a payment to the other session: admitted (the link
    // has no limit), then held there, uncommitted, while the merchant limits the link to one payment.
    const watcher = await db.transaction();
    let limited;
    try {
      const checkout = await desk.locked(watcher, recording.id);
      expect(await desk.admits(watcher, checkout)).toBe(true);
      let answered = false;
      const limiting = m.org.core.request('PUT', `/v1/payment/links/${link.id}`, { body: { paymentLimit: 1 } }).then((r) => ((answered = true), r));
      // Until the update has answered or waits for the link's row lock.
      const waitingForLink = async () => Number((await db.raw(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%from "payment_links"%for update'`)).rows[0].n);
      for (let i = 0; i < 250 && !answered && (await waitingForLink()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
      await desk.update(watcher, checkout, { confirmingRaw: '2000000' });
      await watcher.commit();
      limited = await limiting;
    } finally {
      if (!watcher.isCompleted()) await watcher.rollback();
    }
    // Two payments are being paid: a limit of one is refused, and the link stays unlimited.
    expect(limited.status).toBe(422);
    expect(limited.body.error.details.fields).toEqual([expect.objectContaining({ field: 'paymentLimit', error: expect.stringContaining('being paid (2)') })]);
    expect((await m.org.core.get(`/v1/payment/links/${link.id}`)).body.data).toMatchObject({ paymentLimit: null, paymentsConsumed: 0 });
  });

  test('list, filter, update and validation; another organisation gets 404 for every link of this one', async () => {
    const a = await createLink({ name: 'Alpha tea', amount: '1' });
    const b = await createLink({ name: 'Beta tea', currency: 'USDC' });
    expect(b.allowedAssets.map((x: any) => x.symbol)).toEqual(['USDC']);
    const list = (await m.org.core.get(`/v1/payment/links?search=tea&limit=1`)).body;
    expect(list).toMatchObject({ total: 2, hasMore: true });
    expect(list.data[0].id).toBe(b.id);
    expect((await m.org.core.get(`/v1/payment/links?currency=USDC&search=tea`)).body.data.map((l: any) => l.id)).toEqual([b.id]);
    expect((await m.org.core.get(`/v1/payment/links?from=2000-01-01&to=2000-01-02`)).body.total).toBe(0);
    expect((await m.org.core.get(`/v1/payment/links?masterWalletId=${m.wallet.id}&isActive=true&search=Alpha`)).body.data.map((l: any) => l.id)).toEqual([a.id]);

    // The same through GraphQL.
    const bySlug = await m.org.core.graphql('query($slug: String!) { paymentLinkBySlug(slug: $slug) { id amount currency allowedAssets { symbol } checkoutUrl } }', { slug: a.slug });
    expect(bySlug.body.data.paymentLinkBySlug).toMatchObject({ id: a.id, amount: '1', currency: 'USD', checkoutUrl: `/pay/${a.slug}` });
    const viaGraphql = await m.org.core.graphql('mutation($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { slug amount paymentsConsumed } }', { input: { name: 'Gamma tea', currency: 'USD', amount: '3.5', evmSettlementWalletId: m.wallet.id, slug: `gamma-${a.id.slice(0, 8)}` } });
    expect(viaGraphql.body.data.createPaymentLink).toEqual({ slug: `gamma-${a.id.slice(0, 8)}`, amount: '3.5', paymentsConsumed: 0 });

    const updated = await m.org.core.request('PUT', `/v1/payment/links/${a.id}`, { body: { name: 'Alpha tea, large', amount: '1.75', allowedAssetIds: [m.usdc.id], slug: `alpha-${a.id.slice(0, 8)}` } });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ name: 'Alpha tea, large', amount: '1.75', slug: `alpha-${a.id.slice(0, 8)}`, allowedAssets: [{ id: m.usdc.id }] });

    const taken = await m.org.core.post('/v1/payment/links', { name: 'Copy', currency: 'USD', amount: '1', evmSettlementWalletId: m.wallet.id, slug: `alpha-${a.id.slice(0, 8)}` });
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('DUPLICATE_ENTRY');
    const noAsset = await m.org.core.post('/v1/payment/links', { name: 'Euro', currency: 'EUR', amount: '1', evmSettlementWalletId: m.wallet.id });
    expect(noAsset.status).toBe(422);
    expect(noAsset.body.error.details.fields[0].field).toBe('allowedAssetIds');
    const tooPrecise = await m.org.core.post('/v1/payment/links', { name: 'Dust', currency: 'USD', amount: '0.0000001', evmSettlementWalletId: m.wallet.id });
    expect(tooPrecise.body.error.details.fields[0].field).toBe('amount');
    // A fixed amount beyond uint256 in one allowed asset's base units (DAI's 18 decimals) is no payable link.
    const dai = (await m.org.core.get(`/v1/assets?blockchainId=${m.wallet.blockchainId}&symbol=DAI`)).body.data[0];
    const tooLarge = await m.org.core.post('/v1/payment/links', { name: 'Everything', currency: 'USD', amount: `2${'0'.repeat(59)}`, evmSettlementWalletId: m.wallet.id, allowedAssetIds: [m.usdc.id, dai.id] });
    expect([tooLarge.status, tooLarge.body.error.details.fields]).toEqual([422, [{ field: 'amount', error: 'is too large' }]]);
    expect((await m.org.core.request('PUT', `/v1/payment/links/${a.id}`, { body: { amount: `2${'0'.repeat(59)}`, allowedAssetIds: [dai.id] } })).body.error.details.fields).toEqual([{ field: 'amount', error: 'is too large' }]);
    const badUrl = await m.org.core.post('/v1/payment/links', { name: 'X', currency: 'USD', evmSettlementWalletId: m.wallet.id, redirectUrl: 'javascript:alert(1)' });
    expect(badUrl.status).toBe(422);
    // A scheme in capitals is stored in lower case, as the hosted page checks it (it shows the image and sends the payer on).
    const capitals = await m.org.core.post('/v1/payment/links', { name: 'Caps', currency: 'USD', evmSettlementWalletId: m.wallet.id, redirectUrl: 'HTTPS://shop.example/Thanks', imgUrl: 'HTTPS://shop.example/Logo.png' });
    expect([capitals.status, capitals.body.data.redirectUrl, capitals.body.data.imgUrl]).toEqual([201, 'https://shop.example/Thanks', 'https://shop.example/Logo.png']);
    const renamed = await m.org.core.request('PUT', `/v1/payment/links/${capitals.body.data.id}`, { body: { redirectUrl: 'Http://shop.example/back' } });
    expect(renamed.body.data.redirectUrl).toBe('http://shop.example/back');

    // Cross-organisation: 404, never 403, for reads, writes and the other's wallet as settlement.
    for (const [method, path] of [['GET', `/v1/payment/links/${a.id}`], ['GET', `/v1/payment-links/${a.id}`], ['PUT', `/v1/payment/links/${a.id}`], ['DELETE', `/v1/payment/links/${a.id}`], ['POST', `/v1/payment/links/${a.id}/deactivate`], ['GET', `/v1/payment/links/${a.id}/transfers`], ['GET', `/v1/payment/links/${a.id}/checkouts`], ['GET', `/v1/payment/links-by-slug/${b.slug}`]]) {
      const res = await other.org.core.request(method, path, method === 'PUT' ? { body: { name: 'mine now' } } : {});
      expect([method, path, res.status, res.body.error?.code]).toEqual([method, path, 404, 'NOT_FOUND']);
    }
    const overGraphql = await other.org.core.graphql('query($id: ID!) { paymentLink(id: $id) { id } }', { id: a.id });
    expect(overGraphql.body.errors[0].extensions.code).toBe('NOT_FOUND');
    const foreignWallet = await other.org.core.post('/v1/payment/links', { name: 'Theft', currency: 'USD', evmSettlementWalletId: m.wallet.id });
    expect(foreignWallet.status).toBe(404);
    expect((await other.org.core.get('/v1/payment/links')).body.total).toBe(0);
    expect((await m.org.core.get(`/v1/payment/links/not-a-uuid`)).status).toBe(404);

    // The API document: the rows above, and the public checkout without the API key.
    const doc = (await publicClient(t).get('/v1/openapi.json')).body;
    expect(Object.keys(doc.paths['/v1/payment/links'])).toEqual(['post', 'get']);
    expect(doc.paths['/v1/payment/intents/{id}/cancel'].post.tags).toEqual(['Payment intents']);
    expect(doc.paths['/v1/checkout/links/{slug}/sessions'].post).toMatchObject({ security: [], tags: ['Public checkout'] });
  }, 60_000);

  test("a fixed amount is kept exactly as asked, to every decimal an allowed asset has (up to 36) and to every whole digit the API takes (60)", async () => {
    // Tokens may have up to 36 decimals, and none: registered on the dev chain here as an operator's chain config would.
    const db = t.keel.platform.db;
    const like = await db('assets').where({ id: m.usdc.id }).first();
    const token = async (symbol: string, decimals: number) => {
      const address = `0x${[...symbol.padEnd(8, '0')].map((c) => c.charCodeAt(0).toString(16)).join('').padEnd(40, '0').slice(0, 40)}`;
      const [{ id }] = await db('assets').insert({ blockchainId: m.wallet.blockchainId, name: symbol, symbol, decimals, address, standard: 'ERC20', logoUrl: like.logoUrl, isNative: false, network: like.network }).returning('id');
      return id as string;
    };
    const fine = await token('FINE', 24);
    const whole = await token('WHOLE', 0);
    const finest = await token('ATTO', 36);

    const exact = await createLink({ name: 'Fine dust', currency: 'FINE', amount: '1.000000000000000000000001', allowedAssetIds: [fine] });
    expect(exact.amount).toBe('1.000000000000000000000001');
    expect((await m.org.core.get(`/v1/payment/links/${exact.id}`)).body.data.amount).toBe('1.000000000000000000000001');
    expect((await publicClient(t).get(`/v1/checkout/links/${exact.slug}`)).body.data.amount).toBe('1.000000000000000000000001');
    const session = await startSession(exact.slug, { assetId: fine });
    expect(session).toMatchObject({ amount: '1.000000000000000000000001', amountDue: '1.000000000000000000000001' });
    expect(session.paymentUri).toMatch(/&uint256=1000000000000000000000001$/);

    // The smallest unit of the token is an amount above 0, not a refused write; trailing zeros are not part of it.
    expect((await createLink({ name: 'One unit', currency: 'FINE', amount: '0.000000000000000000000001', allowedAssetIds: [fine] })).amount).toBe('0.000000000000000000000001');
    const atto = `0.${'0'.repeat(35)}1`;
    expect((await createLink({ name: 'One atto', currency: 'ATTO', amount: atto, allowedAssetIds: [finest] })).amount).toBe(atto);
    const updated = await m.org.core.request('PUT', `/v1/payment/links/${exact.id}`, { body: { amount: '2.500000000000000000000100' } });
    expect([updated.status, updated.body.data.amount]).toEqual([200, '2.5000000000000000000001']);
    expect((await m.org.core.graphql('query($id: ID!) { paymentLink(id: $id) { amount } }', { id: exact.id })).body.data.paymentLink.amount).toBe('2.5000000000000000000001');
    const events = await eventually(async () => {
      const found = received(hooks).filter((e) => e.type === 'payment_link.updated' && e.data.paymentLinkId === exact.id);
      return found.length > 0 && found;
    });
    expect(events[0].data.amount).toBe('2.5000000000000000000001');

    // As many whole digits as a decimal in the API has, in a token without decimals.
    const large = `9${'0'.repeat(59)}`;
    expect((await createLink({ name: 'Everything whole', currency: 'WHOLE', amount: large, allowedAssetIds: [whole] })).amount).toBe(large);
  }, 60_000);
});

describe('the public checkout API is rate-limited per client address', () => {
  let t: TestKeel;
  beforeAll(async () => {
    t = await startTestKeel({ ...PAYMENT_CONFIG, CHECKOUT_RATE_LIMIT_PER_MINUTE: 3 });
  });
  afterAll(() => t?.stop());

  test('the fourth request in a minute gets 429 RATE_LIMIT_EXCEEDED with the limit headers; API-key calls are not counted against it', async () => {
    const client = publicClient(t);
    for (let i = 0; i < 3; i++) {
      const res = await client.get('/v1/checkout/links/no-such-link');
      expect([res.status, res.headers.get('x-ratelimit-limit'), res.headers.get('x-ratelimit-remaining')]).toEqual([404, '3', String(2 - i)]);
    }
    const refused = await client.get('/pay/anything');
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { limit: 3, remaining: 0 } });
    const org = await t.createOrg();
    expect((await org.core.get('/v1/payment/links')).status).toBe(200);
  });
});
