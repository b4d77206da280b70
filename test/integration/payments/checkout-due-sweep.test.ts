import { PAYMENT_CONFIG, Merchant, merchant, pay } from './support';
import { startTestKeel, TestKeel } from '../../support/keel';
import { eventually } from '../../support/eventually';

/**
 * A paid checkout whose settlement sweep could not be arranged (the settlement wallet has no coin for
 * the gas) keeps its address active past its expiry and grace, and is swept once the wallet has gas,
 * with no new deposit.
 */
describe('a checkout whose settlement sweep is due again', () => {
  let t: TestKeel;
  let m: Merchant;
  beforeAll(async () => {
    t = await startTestKeel({ ...PAYMENT_CONFIG, CHECKOUT_LATE_PAYMENT_GRACE_SECONDS: 1, SWEEP_RETRY_BASE_MS: 300, SWEEP_RETRY_POLL_INTERVAL_MS: 100 });
    m = await merchant(t);
  }, 120_000);
  afterAll(() => t?.stop());

  test('is not retired while its sweep is due, and is swept once the settlement wallet has gas', async () => {
    const org = await t.createOrg();
    const blockchainId = m.wallet.blockchainId;
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId, name: 'Dry treasury' })).body.data;
    const dry: Merchant = { org, wallet: { ...wallet, blockchainId }, usdc: m.usdc };
    const intent = (await org.core.post('/v1/payment/intents', { amount: '1', assetId: m.usdc.id, masterWalletId: wallet.id, expiresInSeconds: 600 })).body.data;
    await pay(dry, intent.depositAddress, '1');
    await eventually(async () => (await org.core.get(`/v1/payment/intents/${intent.id}`)).body.data.status === 'SUCCEEDED', 60_000, 250);
    const db = t.keel.platform.db;
    const checkout = await db('checkouts').where({ paymentIntentId: intent.id }).first();
    await eventually(async () => (await db('sweeps_due').where({ addressId: checkout.addressId, purpose: 'checkout_settlement' }).first()) !== undefined, 30_000, 100);

    // Past its expiry and grace (moved back an hour rather than waited for: the shared dev chains'
    // clock runs ahead of the wall's under load) the address stays active: its sweep is still due.
    await db('checkouts').where({ id: checkout.id }).update({ expiresAt: new Date(Date.now() - 3_600_000) });
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await db('checkouts').where({ id: checkout.id }).first()).addressRetiredAt).toBeNull();

    expect((await org.core.post('/v1/dev/faucet', { blockchainId, address: wallet.walletAddress, amount: '1' })).status).toBe(200);
    const sweep = await eventually(async () => (await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.data.find((x: { kind: string; addressId: string; status: string }) => x.kind === 'sweep' && x.addressId === checkout.addressId && x.status === 'CONFIRMED'), 60_000, 250);
    expect(sweep.items[0]).toMatchObject({ amount: '1', recipient: wallet.walletAddress });
    expect(await db('sweeps_due').where({ addressId: checkout.addressId })).toEqual([]);
    // Nothing left to sweep or watch: the address is retired now.
    await eventually(async () => (await db('checkouts').where({ id: checkout.id }).first()).addressRetiredAt !== null, 60_000, 250);
  }, 180_000);
});
