import { ethers } from 'ethers';
import type { TestKeel, TestOrg } from '../support/keel';
import { OwnChainKeel, startKeelOnOwnChain } from '../support/own-chain';
import { eventually } from '../support/eventually';
import { devChainAccount } from '../../src/platform/chain/dev-accounts';
import { mine, mineTo, revert, snapshot } from '../support/chain-controls';

const CONFIRMATIONS = 2;
const USDC = (text: string) => ethers.parseUnits(text, 6);
const erc20 = new ethers.Interface(['function balanceOf(address) view returns (uint256)', 'function transfer(address to, uint256 amount) returns (bool)']);

/**
 * A reorg deeper than the confirmation count takes back a deposit whose funds were already spent
 * (a transfer out took them from the wallet's custody account; orders trade the trading account,
 * funded by deposits to trading): the ledger must not keep money the chain no longer holds, so the
 * part it cannot take back becomes the wallet's debt, which blocks spending (transfers and deposits
 * to trading), and the deposit coming back in the new branch repays it instead of counting twice.
 */
describe('a deep reorg of a deposit already spent', () => {
  let k: OwnChainKeel;
  let t: TestKeel;
  let org: TestOrg;
  let wallet: { id: string; walletAddress: string };
  let usdc: { id: string; address: string };
  let chainProvider: ethers.JsonRpcProvider;
  let rpcUrl: string;

  beforeAll(async () => {
    // Settlement on: the chain gets its settlement contract, so deposits to trading can be asked for.
    k = await startKeelOnOwnChain(31_351, CONFIRMATIONS, { TRANSFER_POLL_INTERVAL_MS: 200, SETTLEMENT_ENABLED: true });
    ({ t, org } = k);
    const { assets, blockchainId } = k;
    rpcUrl = k.chain.rpcUrl;
    usdc = assets.USDC;
    wallet = (await org.core.request('POST', '/v1/master-wallets', { body: { blockchainId, name: 'Trader' } })).body.data;
    chainProvider = new ethers.JsonRpcProvider(rpcUrl, 31_351, { staticNetwork: true, cacheTimeout: -1 });
    for (const [asset, amount] of [['ETH', '1'], ['USDC', '20']]) {
      expect((await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId, address: wallet.walletAddress, asset, amount } })).status).toBe(200);
    }
    await mine(rpcUrl, CONFIRMATIONS);
    await eventually(async () => (await usdcCustody()).available === USDC('20'));
    await eventually(() => t.keel.platform.db('settlement_contracts').first(), 30_000);
  }, 60_000);
  afterAll(() => k?.stop());

  /** The wallet's custody account in USDC (at its address) and its debt. */
  const usdcCustody = async () => {
    const b = await t.keel.services.ledger.balance(t.keel.platform.db, wallet.id, usdc.id, 'custody');
    const debt = await t.keel.platform.db('wallet_debts').where({ walletId: wallet.id, assetId: usdc.id }).first();
    return { available: b.available, locked: b.locked, debt: BigInt(debt?.amount ?? 0) };
  };
  const onChain = async () => erc20.decodeFunctionResult('balanceOf', await chainProvider.call({ to: usdc.address, data: erc20.encodeFunctionData('balanceOf', [wallet.walletAddress]) }))[0] as bigint;
  const events = async (type: string) => (await t.keel.platform.db('outbox_events').where({ type }).orderBy('createdAt')).map((e) => e.envelope.data);
  const debtMetric = async (event: string) => (await t.keel.platform.metrics.registry.getSingleMetric('keel_wallet_debt_events_total')!.get()).values.find((v) => v.labels.event === event)?.value ?? 0;
  const withdraw = (amount: string) => org.core.request('POST', `/v1/master-wallets/${wallet.id}/transfer`, { body: { assets: [{ assetId: usdc.id, recipient: devChainAccount(2).address, amount }] } });
  const depositToTrading = (amount: string) => org.pro.request('POST', `/v1/orderbook/wallets/${wallet.id}/trading/deposits`, { body: { assetId: usdc.id, amount } });

  /** The wallet's custody ledger (available + locked) never exceeds what the chain holds plus what the wallet owes. */
  async function expectNoMoneyCreated() {
    const b = await usdcCustody();
    expect(b.available + b.locked).toBeLessThanOrEqual((await onChain()) + b.debt);
    expect((await t.keel.services.ledger.invariant()).every((i) => i.holds)).toBe(true);
  }

  test('records the shortfall as a debt that blocks spending, and the re-mined deposit repays it once', async () => {
    const beforeDeposit = await snapshot(rpcUrl);
    // The deposit is signed here so that the very same transaction can come back after the reorg.
    const depositor = new ethers.Wallet(devChainAccount(0).privateKey, chainProvider);
    const deposit = await depositor.signTransaction(await depositor.populateTransaction({ to: usdc.address, data: erc20.encodeFunctionData('transfer', [wallet.walletAddress, USDC('100')]) }));
    const hash = await chainProvider.send('eth_sendRawTransaction', [deposit]);
    await mine(rpcUrl, CONFIRMATIONS);
    await eventually(async () => (await usdcCustody()).available === USDC('120'));

    // 100 of it leaves at once (taken from custody when asked), mined and confirmed.
    const spent = await withdraw('100');
    expect(spent.status).toBe(201);
    expect((await usdcCustody()).available).toBe(USDC('20'));
    await eventually(async () => {
      await mine(rpcUrl, 1);
      return (await t.keel.platform.db('transfer_items').where({ transferId: spent.body.data.id, status: 'CONFIRMED' }).first()) !== undefined;
    }, 30_000, 300);

    // The reorg: back to before the deposit, and a longer branch without it (nor the transfer): it
    // grows past the old head, as a branch that wins does (a node merely behind is waited for).
    const oldHead = await chainProvider.getBlockNumber();
    await revert(rpcUrl, beforeDeposit);
    await mineTo(rpcUrl, oldHead + 3);
    await eventually(async () => (await usdcCustody()).debt !== 0n, 30_000);
    expect(await onChain()).toBe(USDC('20'));
    // 20 was still available and is taken back; the 80 already spent is owed.
    expect(await usdcCustody()).toEqual({ available: 0n, locked: 0n, debt: USDC('80') });
    await expectNoMoneyCreated();
    expect(await events('wallet.debt_recorded')).toEqual([expect.objectContaining({ walletId: wallet.id, assetId: usdc.id, amount: '80000000', outstanding: '80000000' })]);
    expect(await debtMetric('recorded')).toBe(1);

    // Nothing can leave custody while the debt stands: neither a transfer nor a deposit to trading.
    const refusedWithdrawal = await withdraw('1');
    expect(refusedWithdrawal.status).toBe(400);
    expect(refusedWithdrawal.body.error.code).toBe('INSUFFICIENT_FUNDS');
    const refusedDeposit = await depositToTrading('1');
    expect(refusedDeposit.status).toBe(400);
    expect(refusedDeposit.body.error.code).toBe('INSUFFICIENT_FUNDS');
    await expectNoMoneyCreated();

    // The same deposit is mined again in the new branch: it repays the debt and counts once in all.
    expect(await chainProvider.send('eth_sendRawTransaction', [deposit])).toBe(hash);
    await mine(rpcUrl, CONFIRMATIONS);
    await eventually(async () => (await usdcCustody()).debt === 0n, 30_000);
    expect(await usdcCustody()).toEqual({ available: USDC('20'), locked: 0n, debt: 0n });
    expect(await onChain()).toBe(USDC('120'));
    await expectNoMoneyCreated();
    expect(await events('wallet.debt_repaid')).toEqual([expect.objectContaining({ walletId: wallet.id, amount: '80000000', outstanding: '0' })]);
    expect(await debtMetric('repaid')).toBe(1);

    await mine(rpcUrl, 3);
    await new Promise((r) => setTimeout(r, 500));
    expect((await usdcCustody()).available).toBe(USDC('20')); // credited once, repaid once
    expect((await events('wallet.debt_repaid')).length).toBe(1);
    expect((await withdraw('1')).status).toBe(201);
    expect((await depositToTrading('1')).status).toBe(201);
  });
});
