import type { ChainPort } from '../../../src/platform/chain-port/chain-port';
import { startTestKeel, TestKeel } from '../../support/keel';
import { eventually } from '../../support/eventually';
import { merchant, pay, Merchant, PAYMENT_CONFIG } from './support';

/**
 * The checkout watcher serves every chain in one loop: a chain whose node does not answer must hold
 * back no other chain's payments (their confirmations counted, their checkouts paid).
 */
describe('a chain whose node does not answer', () => {
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

  test("holds back no other chain's payments, and its own are counted once it answers again", async () => {
    const [chainA, chainB] = (await m.org.core.get('/v1/blockchains')).body.data.map((c: { id: string }) => c.id);
    expect(chainA).toBe(m.wallet.blockchainId);
    const walletB = (await m.org.core.post('/v1/master-wallets', { blockchainId: chainB, name: 'Shop treasury B' })).body.data;
    const usdcB = (await m.org.core.get(`/v1/assets?blockchainId=${chainB}&symbol=USDC`)).body.data[0];

    // Chain A's node stops answering the checkout watcher (its deposit watcher, apart, still records).
    const networks = t.keel.services.networks;
    const realPort = networks.port.bind(networks);
    const down = (port: ChainPort): ChainPort => new Proxy(port, { get: (target, prop) => (['height', 'blockHash', 'balance', 'blockTime'].includes(prop as string) ? () => Promise.reject(Object.assign(new Error('request timeout'), { code: 'TIMEOUT' })) : Reflect.get(target, prop, target)) });
    jest.spyOn(networks, 'port').mockImplementation((id: string) => {
      const port = realPort(id);
      return id === chainA && port ? down(port) : port;
    });

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
});
