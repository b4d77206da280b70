import { ethers } from 'ethers';
import { BookKeel, BookOrg, marketBody } from './support';
import { eventually } from '../../support/eventually';
import { keelDevFund } from '../../support/keel-cli';

/**
 * The sandbox path end to end, nothing credited by hand: `keel dev fund` sends coins on the dev
 * chain, the deposit watcher confirms and credits them to custody, the wallets deposit them to
 * trading (the settlement contract), trade, and a withdrawal from trading can take only what open
 * orders do not hold.
 */
let k: BookKeel;
let org: BookOrg;

beforeAll(async () => {
  k = await BookKeel.start({ CHAIN_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 100 });
  org = await k.createOrg();
});
afterAll(() => k?.stop());

const balances = async (walletId: string) => {
  const res = await org.pro().get(`/v1/orderbook/wallets/${walletId}/balances`);
  return Object.fromEntries(res.body.data.map((x: { symbol: string; available: string; locked: string }) => [x.symbol, { available: x.available, locked: x.locked }]));
};

test('funded on chain, detected, credited, traded; a withdrawal cannot take what an order holds', async () => {
  const { ETH, USDC } = await k.assets();
  // Trading balances sit in the chain's settlement contract (this Keel runs no settlement worker to deploy it).
  await k.services.settlementDeployments.ensureOnDevChain(k.services.networks.get(ETH.blockchainId)!);
  expect((await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', ETH, USDC))).status).toBe(201);
  const seller = (await org.core().post('/v1/master-wallets', { blockchainId: ETH.blockchainId, name: 'Seller' })).body.data;
  const buyerWallet = (await org.core().post('/v1/master-wallets', { blockchainId: ETH.blockchainId, name: 'Buyer' })).body.data;
  const buyer = (await org.core().post(`/v1/master-wallets/${buyerWallet.id}/addresses`, {})).body.data;

  await keelDevFund(k.config, seller.walletAddress, 'ETH', '3');
  await keelDevFund(k.config, buyer.address, 'USDC', '5000');
  await keelDevFund(k.config, buyer.address, 'ETH', '0.1'); // its deposit's gas
  // Not tradable at the address: each moves its funds into trading, once the watcher credited them to custody.
  const deposit = async (walletId: string, assetId: string, amount: string) => {
    const res = await eventually(async () => {
      const r = await org.pro().post(`/v1/orderbook/wallets/${walletId}/trading/deposits`, { assetId, amount });
      return r.status === 201 ? r : undefined;
    }, 30_000, 200);
    await eventually(async () => (await org.pro().get(`/v1/orderbook/trading-transfers/${res.body.data.id}`)).body.data?.status === 'CONFIRMED', 60_000, 200);
  };
  await deposit(seller.id, ETH.id, '2.5');
  await deposit(buyer.id, USDC.id, '5000');
  await eventually(async () => (await balances(seller.id)).ETH?.available === '2.5' && (await balances(buyer.id)).USDC?.available === '5000', 30_000);

  const sell = await org.pro().post('/v1/orderbook/orders', { walletId: seller.id, market: 'ETH-USDC', side: 'SELL', type: 'LIMIT', price: '2000', quantity: '2' });
  expect(sell.status).toBe(201);
  const buy = await org.pro().post('/v1/orderbook/orders', { walletId: buyer.id, market: 'ETH-USDC', side: 'BUY', type: 'LIMIT', price: '2000', quantity: '0.5' });
  expect(buy.body.data.status).toBe('FILLED');
  expect(await balances(buyer.id)).toMatchObject({ ETH: { available: '0.5', locked: '0' } });
  expect(await balances(seller.id)).toMatchObject({ ETH: { available: '0.5', locked: '1.5' } });

  // The contract holds the seller's 2.5 ETH, but 1.5 is locked in its order and 0.5 is sold.
  const withdraw = (amount: string) => org.pro().post(`/v1/orderbook/wallets/${seller.id}/trading/withdrawals`, { assetId: ETH.id, amount, recipient: ethers.Wallet.createRandom().address });
  const tooMuch = await withdraw('1.5');
  expect(tooMuch.status).toBe(400);
  expect(tooMuch.body.error.code).toBe('INSUFFICIENT_FUNDS');
  const fine = await withdraw('0.5');
  expect(fine.status).toBe(201);
  expect((await balances(seller.id)).ETH).toEqual({ available: '0', locked: '1.5' });

  const invariant = await k.services.ledger.invariant();
  expect(invariant.every((a) => a.holds)).toBe(true);
});
