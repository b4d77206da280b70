import { ethers } from 'ethers';
import { BookKeel, BookOrg, marketBody } from './support';
import { eventually } from '../../support/eventually';
import { keelDevFund } from '../../support/keel-cli';

/**
 * The sandbox path end to end, nothing credited by hand: `keel dev fund` sends coins on the dev
 * chain, the deposit watcher confirms and credits them, the wallets trade, and a withdrawal can take
 * only what open orders do not hold.
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
  expect((await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', ETH, USDC))).status).toBe(201);
  const seller = (await org.core().post('/v1/master-wallets', { blockchainId: ETH.blockchainId, name: 'Seller' })).body.data;
  const buyerWallet = (await org.core().post('/v1/master-wallets', { blockchainId: ETH.blockchainId, name: 'Buyer' })).body.data;
  const buyer = (await org.core().post(`/v1/master-wallets/${buyerWallet.id}/addresses`, {})).body.data;

  await keelDevFund(k.config, seller.walletAddress, 'ETH', '3');
  await keelDevFund(k.config, buyer.address, 'USDC', '5000');
  await eventually(async () => (await balances(seller.id)).ETH?.available === '3' && (await balances(buyer.id)).USDC?.available === '5000', 30_000);

  const sell = await org.pro().post('/v1/orderbook/orders', { walletId: seller.id, market: 'ETH-USDC', side: 'SELL', type: 'LIMIT', price: '2000', quantity: '2' });
  expect(sell.status).toBe(201);
  const buy = await org.pro().post('/v1/orderbook/orders', { walletId: buyer.id, market: 'ETH-USDC', side: 'BUY', type: 'LIMIT', price: '2000', quantity: '0.5' });
  expect(buy.body.data.status).toBe('FILLED');
  expect(await balances(buyer.id)).toMatchObject({ ETH: { available: '0.5', locked: '0' } });
  expect(await balances(seller.id)).toMatchObject({ ETH: { available: '1', locked: '1.5' } });

  // On chain the seller still holds 3 ETH, but 1.5 is locked in its order and 0.5 is sold.
  const tooMuch = await org.core().post(`/v1/master-wallets/${seller.id}/transfer`, { assets: [{ assetId: ETH.id, recipient: ethers.Wallet.createRandom().address, amount: '1.5' }] });
  expect(tooMuch.status).toBe(400);
  expect(tooMuch.body.error.code).toBe('INSUFFICIENT_FUNDS');
  const fine = await org.core().post(`/v1/master-wallets/${seller.id}/transfer`, { assets: [{ assetId: ETH.id, recipient: ethers.Wallet.createRandom().address, amount: '0.5' }] });
  expect(fine.status).toBe(201);
  expect((await balances(seller.id)).ETH).toEqual({ available: '0.5', locked: '1.5' });

  const invariant = await k.services.ledger.invariant();
  expect(invariant.every((a) => a.holds)).toBe(true);
});
