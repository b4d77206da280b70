import { ethers } from 'ethers';
import type { TestKeel, TestOrg } from '../support/keel';
import { OwnChainKeel, startKeelOnOwnChain } from '../support/own-chain';
import { eventually } from '../support/eventually';
import { devChainAccount } from '../../src/platform/chain/dev-accounts';
import { mine, revert, snapshot } from '../support/chain-controls';

const CONFIRMATIONS = 2;
const USDC = (text: string) => ethers.parseUnits(text, 6);
const erc20 = new ethers.Interface(['function balanceOf(address) view returns (uint256)', 'function transfer(address to, uint256 amount) returns (bool)']);

/**
 * A reorg deeper than the confirmation count takes back a deposit whose funds an order has locked:
 * the ledger must not keep money the chain no longer holds, so the part it cannot take back becomes
 * the wallet's debt, and the deposit coming back in the new branch repays it instead of counting twice.
 */
describe('a deep reorg of a deposit already locked in an order', () => {
  let k: OwnChainKeel;
  let t: TestKeel;
  let org: TestOrg;
  let wallet: { id: string; walletAddress: string };
  let usdc: { id: string; address: string };
  let chainProvider: ethers.JsonRpcProvider;
  let rpcUrl: string;

  beforeAll(async () => {
    k = await startKeelOnOwnChain(31_351, CONFIRMATIONS, { TRANSFER_POLL_INTERVAL_MS: 200 });
    ({ t, org } = k);
    const { assets, blockchainId } = k;
    rpcUrl = k.chain.rpcUrl;
    usdc = assets.USDC;
    const market = await (await t.operator()).request('POST', '/v1/orderbook/markets', { body: { symbol: 'ETH-USDC', baseAssetId: assets.ETH.id, quoteAssetId: usdc.id, tickSize: '0.01', lotSize: '0.001', minNotional: '1', makerFee: '0.001', takerFee: '0.002' } });
    expect(market.status).toBe(201);
    wallet = (await org.core.request('POST', '/v1/master-wallets', { body: { blockchainId, name: 'Trader' } })).body.data;
    chainProvider = new ethers.JsonRpcProvider(rpcUrl, 31_351, { staticNetwork: true, cacheTimeout: -1 });
    for (const [asset, amount] of [['ETH', '1'], ['USDC', '20']]) {
      expect((await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId, address: wallet.walletAddress, asset, amount } })).status).toBe(200);
    }
    await mine(rpcUrl, CONFIRMATIONS);
    await eventually(async () => (await usdcBalance()).available === '20');
  }, 60_000);
  afterAll(() => k?.stop());

  const usdcBalance = async () => ((await org.pro.request('GET', `/v1/orderbook/wallets/${wallet.id}/balances`)).body.data as { assetId: string; available: string; locked: string; debt: string }[]).find((b) => b.assetId === usdc.id) ?? { available: '0', locked: '0', debt: '0' };
  const onChain = async () => erc20.decodeFunctionResult('balanceOf', await chainProvider.call({ to: usdc.address, data: erc20.encodeFunctionData('balanceOf', [wallet.walletAddress]) }))[0] as bigint;
  const events = async (type: string) => (await t.keel.platform.db('outbox_events').where({ type }).orderBy('createdAt')).map((e) => e.envelope.data);
  const debtMetric = async (event: string) => (await t.keel.platform.metrics.registry.getSingleMetric('keel_wallet_debt_events_total')!.get()).values.find((v) => v.labels.event === event)?.value ?? 0;
  const buy = (quantity: string) => org.pro.request('POST', '/v1/orderbook/orders', { body: { walletId: wallet.id, market: 'ETH-USDC', side: 'BUY', type: 'LIMIT', price: '1000', quantity } });
  const withdraw = (amount: string) => org.core.request('POST', `/v1/master-wallets/${wallet.id}/transfer`, { body: { assets: [{ assetId: usdc.id, recipient: devChainAccount(2).address, amount }] } });

  /** The wallet's ledger (available + locked) never exceeds what the chain holds plus what the wallet owes. */
  async function expectNoMoneyCreated() {
    const b = await usdcBalance();
    expect(USDC(b.available) + USDC(b.locked)).toBeLessThanOrEqual((await onChain()) + USDC(b.debt));
    expect((await t.keel.services.ledger.invariant()).every((i) => i.holds)).toBe(true);
  }

  test('records the shortfall as a debt that blocks spending, and the re-mined deposit repays it once', async () => {
    const beforeDeposit = await snapshot(rpcUrl);
    // The deposit is signed here so that the very same transaction can come back after the reorg.
    const depositor = new ethers.Wallet(devChainAccount(0).privateKey, chainProvider);
    const deposit = await depositor.signTransaction(await depositor.populateTransaction({ to: usdc.address, data: erc20.encodeFunctionData('transfer', [wallet.walletAddress, USDC('100')]) }));
    const hash = await chainProvider.send('eth_sendRawTransaction', [deposit]);
    await mine(rpcUrl, CONFIRMATIONS);
    await eventually(async () => (await usdcBalance()).available === '120');

    // BUY 0.1 ETH at 1000 holds 100 USDC plus the 0.2% fee.
    const order = await buy('0.1');
    expect(order.status).toBe(201);
    expect(await usdcBalance()).toMatchObject({ available: '19.8', locked: '100.2', debt: '0' });

    // The reorg: back to before the deposit, and a longer branch without it.
    await revert(rpcUrl, beforeDeposit);
    await mine(rpcUrl, CONFIRMATIONS + 3);
    await eventually(async () => (await usdcBalance()).debt !== '0', 30_000);
    expect(await onChain()).toBe(USDC('20'));
    // 19.8 was still available and is taken back; the 80.2 the order holds is owed.
    expect(await usdcBalance()).toMatchObject({ available: '0', locked: '100.2', debt: '80.2' });
    const graphql = await org.pro.request('POST', '/graphql', { body: { query: 'query($id: ID!) { walletBalances(walletId: $id) { assetId available locked debt } }', variables: { id: wallet.id } } });
    expect(graphql.body.data.walletBalances).toContainEqual({ assetId: usdc.id, available: '0', locked: '100.2', debt: '80.2' });
    await expectNoMoneyCreated();
    expect(await events('wallet.debt_recorded')).toEqual([expect.objectContaining({ walletId: wallet.id, assetId: usdc.id, amount: '80200000', outstanding: '80200000' })]);
    expect(await debtMetric('recorded')).toBe(1);

    // Cancelling frees the 100.2, but nothing of it can leave or be locked again while the debt stands.
    expect((await org.pro.request('DELETE', `/v1/orderbook/orders/${order.body.data.id}`)).status).toBe(200);
    expect(await usdcBalance()).toMatchObject({ available: '100.2', locked: '0', debt: '80.2' });
    const refusedWithdrawal = await withdraw('1');
    expect(refusedWithdrawal.status).toBe(400);
    expect(refusedWithdrawal.body.error.code).toBe('INSUFFICIENT_FUNDS');
    const refusedOrder = await buy('0.001');
    expect(refusedOrder.status).toBe(400);
    expect(refusedOrder.body.error.code).toBe('INSUFFICIENT_FUNDS');
    await expectNoMoneyCreated();

    // The same deposit is mined again in the new branch: it repays the debt and counts once in all.
    expect(await chainProvider.send('eth_sendRawTransaction', [deposit])).toBe(hash);
    await mine(rpcUrl, CONFIRMATIONS);
    await eventually(async () => (await usdcBalance()).debt === '0', 30_000);
    expect(await usdcBalance()).toMatchObject({ available: '120', locked: '0', debt: '0' });
    expect(await onChain()).toBe(USDC('120'));
    await expectNoMoneyCreated();
    expect(await events('wallet.debt_repaid')).toEqual([expect.objectContaining({ walletId: wallet.id, amount: '80200000', outstanding: '0' })]);
    expect(await debtMetric('repaid')).toBe(1);

    await mine(rpcUrl, 3);
    await new Promise((r) => setTimeout(r, 500));
    expect((await usdcBalance()).available).toBe('120'); // credited once, repaid once
    expect((await events('wallet.debt_repaid')).length).toBe(1);
    expect((await buy('0.001')).status).toBe(201);
    expect((await withdraw('1')).status).toBe(201);
  });
});
