import { ethers } from 'ethers';
import { BookKeel, BookOrg, marketBody, units } from '../orderbook/support';
import { ApiClient } from '../../support/api-client';
import { KeelPriceSource } from '../../../src/modules/prices/keel-price-source';
import { ReferencePrices } from '../../../src/modules/prices/reference-prices';

/**
 * Policy prices on the real order book: the price an agent's USD limits use cannot be set by one
 * organisation trading with itself; it needs trades from PRICE_POLICY_MIN_ORGANIZATIONS (3 by
 * default) organisations within the band; without one, the USD rule denies the payment and says why.
 * The token-prices endpoint meanwhile keeps showing the last trade. The cache is off.
 */
let k: BookKeel;
let self: BookOrg;
let others: BookOrg[];
let wallets: Map<BookOrg, string[]>;
let assets: Record<string, { id: string; decimals: number; blockchainId: string }>;
let agent: { id: string; client: ApiClient; walletId: string };

beforeAll(async () => {
  k = await BookKeel.start({ PRICE_CACHE_SECONDS: 0 });
  assets = await k.assets();
  const created = await (await k.operator()).post('/v1/orderbook/markets', marketBody('ETH-USDC', assets.ETH, assets.USDC));
  expect(created.status).toBe(201);
  self = await k.createOrg();
  others = [await k.createOrg(), await k.createOrg(), await k.createOrg()];
  wallets = new Map();
  for (const org of [self, ...others]) {
    const ids = [await k.wallet(org, 'One'), await k.wallet(org, 'Two')];
    for (const id of ids) {
      await k.credit(org, id, assets.ETH.id, units('100', 18));
      await k.credit(org, id, assets.USDC.id, units('1000000', 6));
    }
    wallets.set(org, ids);
  }
  // An agent of the self-trading organisation, whose policy holds every payment it can value (approval above 0 USD).
  const res = await self.core().post('/v1/agents', { name: 'Buyer' });
  expect(res.status).toBe(201);
  const client = self.core().with({ apiKey: res.body.data.apiKey, orgId: self.orgId });
  const wallet = await self.core().post(`/v1/agents/${res.body.data.id}/wallets/create`, { blockchainId: assets.ETH.blockchainId, masterWalletId: wallets.get(self)![0] });
  expect(wallet.status).toBe(201);
  agent = { id: res.body.data.id, client, walletId: wallet.body.data.id };
  const policy = await self.core().put(`/v1/agents/${agent.id}/policy`, {
    allowedBlockchainIds: [assets.ETH.blockchainId],
    allowedAssetIds: [assets.ETH.id],
    allowAnyRecipient: true,
    maxPerPaymentUsd: '1000',
    approvalAboveUsd: '0',
  });
  expect(policy.status).toBe(200);
}, 180_000);
afterAll(() => k?.stop());

/** `seller` sells 0.5 ETH to `buyer` at `price` (wallets: [organisation, which of its two]). */
async function trade(seller: [BookOrg, number], buyer: [BookOrg, number], price: string) {
  const sell = await seller[0].pro().post('/v1/orderbook/orders', { market: 'ETH-USDC', type: 'LIMIT', walletId: wallets.get(seller[0])![seller[1]], side: 'SELL', price, quantity: '0.5' });
  expect(sell.status).toBe(201);
  const buy = await buyer[0].pro().post('/v1/orderbook/orders', { market: 'ETH-USDC', type: 'LIMIT', walletId: wallets.get(buyer[0])![buyer[1]], side: 'BUY', price, quantity: '0.5' });
  expect(buy.body.data.status).toBe('FILLED');
}

async function pay(amount: string) {
  const res = await agent.client.post(`/v1/agents/${agent.id}/payments`, { agentWalletId: agent.walletId, assetId: assets.ETH.id, recipient: ethers.Wallet.createRandom().address, amount });
  expect([res.status, res.body.error]).toEqual([201, undefined]);
  return res.body.data;
}
const rule = (payment: { policyEvaluation: { rules: { rule: string; outcome: string; detail: string }[] } }, name: string) => payment.policyEvaluation.rules.find((r) => r.rule === name)!;
const displayed = async () => (await self.core().post('/v1/assets/prices/tokens', { symbols: ['ETH'] })).body.data[0];

describe('policy prices', () => {
  test('with no trade and no reference there is no trustworthy price: the USD rule fails closed, the payment is denied with the reason', async () => {
    const p = await pay('0.01');
    expect(p).toMatchObject({ status: 'POLICY_DENIED', amountUsd: null });
    expect(rule(p, 'usd_value_known').outcome).toBe('FAIL');
    expect(p.denialReason).toMatch(/^no trustworthy USD price for ETH: no trade of ETH in the last 3600s .* so the payment is denied$/);
    expect(p.policyEvaluation.usdPrice).toMatchObject({ priceUsd: null, source: 'none' });
  });

  test("a price one organisation sets by trading between its own wallets is shown, but refused as a policy price: the agent's payment is denied, saying so", async () => {
    await trade([self, 0], [self, 1], '5');
    await trade([self, 1], [self, 0], '5');
    expect(await displayed()).toMatchObject({ price: '5', source: 'orderbook:ETH-USDC' });
    const p = await pay('0.01');
    expect(p).toMatchObject({ status: 'POLICY_DENIED', amountUsd: null });
    expect(p.denialReason).toContain('every trade of ETH in the last 3600s was between wallets of one organisation, and self-trades never set a price');
  });

  test('trades of two organisations are not enough; of three, within the band, they set the price the payment is valued and held at', async () => {
    const [b, c, d] = others;
    await trade([b, 0], [c, 0], '2000');
    const two = await pay('0.01');
    expect(two.status).toBe('POLICY_DENIED');
    expect(two.denialReason).toContain('2 organisation(s) traded ETH in the last 3600s within 10% of their volume-weighted median (self-trades excluded); at least 3 are needed');

    await trade([c, 1], [d, 0], '2000');
    const held = await pay('0.01');
    expect(held).toMatchObject({ status: 'PENDING', amountUsd: '20', denialReason: null });
    expect(rule(held, 'usd_value_known')).toMatchObject({ outcome: 'PASS', detail: '0.01 ETH is worth 20 USD at 2000 USD per ETH (orderbook:ETH-USDC)' });
    expect(rule(held, 'approval_threshold').outcome).toBe('HOLD');
    expect(held.policyEvaluation.usdPrice).toMatchObject({ priceUsd: '2000', source: 'orderbook:ETH-USDC' });
    const over = await pay('1');
    expect([over.status, over.amountUsd, over.denialReason]).toEqual(['POLICY_DENIED', '2000', '2000 USD exceeds the per-payment limit of 1000 USD']);
  });

  test('more self-trades move the displayed price, never the policy price', async () => {
    for (let i = 0; i < 4; i++) await trade([self, i % 2], [self, (i + 1) % 2], '3');
    expect(await displayed()).toMatchObject({ price: '3' });
    expect(await k.services.prices.usdValue(assets.ETH.blockchainId, assets.ETH.id, '2')).toMatchObject({ amountUsd: '4000', price: { priceUsd: '2000', source: 'orderbook:ETH-USDC' } });
    // A self-trading organisation's trades with another organisation far from the band do not count either.
    await trade([self, 0], [others[0], 1], '3');
    expect((await k.services.prices.usdValue(assets.ETH.blockchainId, assets.ETH.id, '1')).amountUsd).toBe('2000');
  });

  test("with the operator's reference: the market sets the policy price within the band; outside it the reference stands", async () => {
    const rules = { windowSeconds: 3_600, minOrganizations: 3, maxDeviationBasisPoints: 1_000n };
    const near = new KeelPriceSource(k.db, new ReferencePrices('{"ETH":"2100"}', 'USDC,USDT,DAI'), 86_400, rules);
    expect(await near.policyPrice('', 'ETH')).toMatchObject({ priceUsd: '2000', source: 'orderbook:ETH-USDC' });
    const far = new KeelPriceSource(k.db, new ReferencePrices('{"ETH":"2500"}', 'USDC,USDT,DAI'), 86_400, rules);
    expect(await far.policyPrice('', 'ETH')).toMatchObject({ priceUsd: '2500', source: 'reference' });
    // The displayed price is pinned by a reference, as it always was.
    expect(await far.price('', 'ETH')).toMatchObject({ priceUsd: '2500', source: 'reference' });
    expect(await near.price('', 'USDC')).toMatchObject({ priceUsd: '1', source: 'par' });
  });
});
