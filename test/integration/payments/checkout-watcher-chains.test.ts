import type { ChainPort } from '../../../src/platform/chain-port/chain-port';
import type { ChainNetworks } from '../../../src/modules/chains';
import { CheckoutWatcher } from '../../../src/modules/checkout/checkout-watcher';
import { CheckoutAddressRetirement } from '../../../src/modules/checkout/address-retirement';
import { startTestKeel, TestKeel } from '../../support/keel';
import { eventually } from '../../support/eventually';
import { merchant, pay, Merchant, PAYMENT_CONFIG } from './support';

let t: TestKeel;
let m: Merchant;
beforeAll(async () => {
  t = await startTestKeel(PAYMENT_CONFIG);
  m = await merchant(t);
}, 60_000);
afterAll(() => t?.stop());
afterEach(() => jest.restoreAllMocks());

const intent = async (masterWalletId: string, assetId: string) => (await m.org.core.post('/v1/payment/intents', { amount: '2', assetId, masterWalletId })).body.data;
const statusOf = async (id: string) => (await m.org.core.get(`/v1/payment/intents/${id}`)).body.data.status;

/**
 * The checkout watcher serves every chain in one loop: a chain whose node does not answer must hold
 * back no other chain's payments (their confirmations counted, their checkouts paid).
 */
describe('a chain whose node does not answer', () => {
  const down = (port: ChainPort): ChainPort => new Proxy(port, { get: (target, prop) => (['height', 'blockHash', 'balance', 'blockTime'].includes(prop as string) ? () => Promise.reject(Object.assign(new Error('request timeout'), { code: 'TIMEOUT' })) : Reflect.get(target, prop, target)) });
  /** Chain A's ports (the first dev chain's, the merchant's) as `networks` gives them, with A's node not answering. */
  const withChainADown = (networks: ChainNetworks, chainA: string) => {
    const realPort = networks.port.bind(networks);
    return (id: string) => {
      const port = realPort(id);
      return id === chainA && port ? down(port) : port;
    };
  };
  const chainsAndWalletB = async () => {
    const [chainA, chainB] = (await m.org.core.get('/v1/blockchains')).body.data.map((c: { id: string }) => c.id);
    expect(chainA).toBe(m.wallet.blockchainId);
    const walletB = (await m.org.core.post('/v1/master-wallets', { blockchainId: chainB, name: 'Shop treasury B' })).body.data;
    const usdcB = (await m.org.core.get(`/v1/assets?blockchainId=${chainB}&symbol=USDC`)).body.data[0];
    return { chainA, chainB, walletB, usdcB };
  };

  test("holds back no other chain's payments, and its own are counted once it answers again", async () => {
    const { chainA, chainB, walletB, usdcB } = await chainsAndWalletB();

    // Chain A's node stops answering the checkout watcher (its deposit watcher, apart, still records).
    const networks = t.keel.services.networks;
    const ports = withChainADown(networks, chainA);
    jest.spyOn(networks, 'port').mockImplementation(ports);

    // A's payment is recorded first (the older row), then B's.
    const onA = await intent(m.wallet.id, m.usdc.id);
    await pay(m, onA.depositAddress, '2');
    await eventually(async () => (await statusOf(onA.id)) === 'PROCESSING', 30_000, 100);
    const onB = await intent(walletB.id, usdcB.id);
    await m.org.core.post('/v1/dev/faucet', { blockchainId: chainB, address: onB.depositAddress, asset: 'USDC', amount: '2' });

    await eventually(async () => (await statusOf(onB.id)) === 'SUCCEEDED', 30_000, 100);
    expect(await statusOf(onA.id)).toBe('PROCESSING');

    jest.restoreAllMocks();
    await eventually(async () => (await statusOf(onA.id)) === 'SUCCEEDED', 30_000, 100);
  }, 90_000);

  test("holds back no other chain's payments however many confirm on it: each chain's confirmations are counted in a batch of its own", async () => {
    const { chainA, chainB, walletB, usdcB } = await chainsAndWalletB();
    const { services, platform } = t.keel;
    // A watcher counting one payment per pass and chain, with A's node down; Keel's own counts nothing meanwhile.
    const networks = { ported: () => services.networks.ported(), port: withChainADown(services.networks, chainA) } as unknown as ChainNetworks;
    const batch = 1;
    const watcher = new CheckoutWatcher(platform.db, services.checkouts, services.checkoutDeposits, networks, 60_000, new CheckoutAddressRetirement(platform.db, networks, 0), platform.logger, batch);
    const counting = CheckoutWatcher.prototype.countConfirmations;
    jest.spyOn(CheckoutWatcher.prototype, 'countConfirmations').mockImplementation(function (this: CheckoutWatcher) {
      return this === watcher ? counting.call(this) : Promise.resolve();
    });
    const recorded = async (id: string) => (await m.org.core.get(`/v1/payment/intents/${id}`)).body.data.transfers.length > 0;

    // More payments than the batch confirm on A, recorded before B's.
    const onA = [];
    for (let i = 0; i <= batch; i++) onA.push(await intent(m.wallet.id, m.usdc.id));
    for (const a of onA) await pay(m, a.depositAddress, '2');
    for (const a of onA) await eventually(() => recorded(a.id), 30_000, 100);
    const onB = await intent(walletB.id, usdcB.id);
    await m.org.core.post('/v1/dev/faucet', { blockchainId: chainB, address: onB.depositAddress, asset: 'USDC', amount: '2' });
    await eventually(() => recorded(onB.id), 30_000, 100);

    await eventually(async () => {
      await watcher.countConfirmations();
      return (await statusOf(onB.id)) === 'SUCCEEDED';
    }, 30_000, 200);
    for (const a of onA) expect(await statusOf(a.id)).toBe('PROCESSING');
  }, 90_000);
});

/**
 * Anyone can open checkouts (a payment link's public sessions), so detection at the head must reach
 * every open checkout, not only the newest: a flood of sessions on one link must not hide another
 * merchant's payment.
 */
describe('detection at the chain head', () => {
  test('an older checkout paid at the head is DETECTED however many are opened after it: each chain goes through all its open checkouts, a batch a pass', async () => {
    const { services, platform } = t.keel;
    // A watcher detecting one checkout per pass and chain; Keel's own detects nothing meanwhile.
    const batch = 1;
    const watcher = new CheckoutWatcher(platform.db, services.checkouts, services.checkoutDeposits, services.networks, 60_000, new CheckoutAddressRetirement(platform.db, services.networks, 0), platform.logger, batch);
    const detecting = CheckoutWatcher.prototype.detect;
    jest.spyOn(CheckoutWatcher.prototype, 'detect').mockImplementation(function (this: CheckoutWatcher) {
      return this === watcher ? detecting.call(this) : Promise.resolve();
    });
    const checkoutStatusOf = async (id: string) => (await m.org.core.get(`/v1/payment/intents/${id}`)).body.data.checkoutStatus;

    // More checkouts open than the batch, the paid one the oldest (anyone can open more, on any link or organisation).
    const paid = await intent(m.wallet.id, m.usdc.id);
    const newer = [];
    for (let i = 0; i < batch; i++) newer.push(await intent(m.wallet.id, m.usdc.id));
    await pay(m, paid.depositAddress, '2');

    // Before the deposit watcher records it at the chain's confirmations, the head shows it: DETECTED.
    const first = await eventually(async () => {
      await watcher.detect();
      const status = await checkoutStatusOf(paid.id);
      return status !== 'AWAITING_PAYMENT' && status;
    }, 30_000, 50);
    expect(first).toBe('DETECTED');
    for (const n of newer) expect(await checkoutStatusOf(n.id)).toBe('AWAITING_PAYMENT');
  }, 60_000);
});
