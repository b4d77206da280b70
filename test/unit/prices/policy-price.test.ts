import { ObservedTrade, policyPrice, PolicyPriceRules, withinDeviation } from '../../../src/modules/prices/policy-price';

const rules: PolicyPriceRules = { minOrganizations: 3, maxDeviationBasisPoints: 1_000n, windowSeconds: 3_600 };
const now = new Date('2026-11-27T12:00:00Z');
let clock = 0;
const trade = (priceUsd: string, quantity: string, maker: string, taker: string): ObservedTrade => ({
  market: 'ETH-USDC',
  priceUsd,
  quantity,
  makerOrganizationId: maker,
  takerOrganizationId: taker,
  at: new Date(now.getTime() - 60_000 + ++clock),
});

describe('policyPrice: the price money decisions may use', () => {
  test('trades between wallets of one organisation never set a price, however many', () => {
    const self = [trade('1', '1000', 'a', 'a'), trade('1', '1000', 'a', 'a')];
    const p = policyPrice('ETH', self, undefined, rules, now);
    expect(p).toEqual({ priceUsd: null, reason: expect.stringContaining('between wallets of one organisation') });
  });

  test('no trade and no reference: no price, saying so', () => {
    expect(policyPrice('ETH', [], undefined, rules, now)).toEqual({ priceUsd: null, reason: expect.stringMatching(/no trade of ETH in the last 3600s.*no reference price/) });
  });

  test('trades from fewer organisations than the minimum set no price', () => {
    const p = policyPrice('ETH', [trade('2000', '1', 'a', 'b'), trade('2001', '1', 'b', 'a')], undefined, rules, now);
    expect(p).toEqual({ priceUsd: null, reason: expect.stringContaining('2 organisation(s) traded ETH in the last 3600s within 10% of their volume-weighted median') });
    expect(p.priceUsd === null && p.reason).toMatch(/at least 3 are needed/);
  });

  test('trades from enough organisations set the volume-weighted median, self-trades ignored', () => {
    const trades = [trade('2000', '1', 'a', 'b'), trade('2010', '3', 'b', 'c'), trade('1990', '1', 'c', 'a'), trade('1', '500', 'd', 'd')];
    const p = policyPrice('ETH', trades, undefined, rules, now);
    expect(p).toMatchObject({ priceUsd: '2010', source: 'orderbook:ETH-USDC', organizations: 3 });
    expect(p.priceUsd !== null && p.asOf).toEqual(trades[2].at);
  });

  test('an organisation pair trading far from the others is outside the band and does not count toward the minimum', () => {
    // b and c trade near 2000 with a; x and y, colluding, trade at 100 in small size: their trades are outside the band.
    const trades = [trade('2000', '2', 'a', 'b'), trade('2002', '2', 'b', 'c'), trade('100', '1', 'x', 'y')];
    expect(policyPrice('ETH', trades, undefined, rules, now)).toMatchObject({ priceUsd: '2000', organizations: 3 });
    // With the colluders' volume dominating the median, the honest trades are the ones outside the band: 2 organisations, no price.
    const dominated = [...trades, trade('100', '50', 'x', 'y')];
    expect(policyPrice('ETH', dominated, undefined, rules, now)).toMatchObject({ priceUsd: null, reason: expect.stringContaining('2 organisation(s)') });
  });

  test("with the operator's reference: trades within its band set the price; outside it, or too few organisations, the reference stands", () => {
    const reference = { priceUsd: '2100', source: 'reference' };
    const near = [trade('2000', '1', 'a', 'b'), trade('2005', '1', 'b', 'c')];
    expect(policyPrice('ETH', near, reference, rules, now)).toMatchObject({ priceUsd: '2000', source: 'orderbook:ETH-USDC', organizations: 3 });
    const far = [trade('1500', '1', 'a', 'b'), trade('1500', '1', 'b', 'c')];
    expect(policyPrice('ETH', far, reference, rules, now)).toEqual({ priceUsd: '2100', source: 'reference', asOf: now, organizations: 0 });
    expect(policyPrice('ETH', [trade('1', '9', 'a', 'a')], reference, rules, now)).toMatchObject({ priceUsd: '2100', source: 'reference' });
  });

  test('the minimum organisations and the band are the rules given', () => {
    const two = [trade('2000', '1', 'a', 'b')];
    expect(policyPrice('ETH', two, undefined, { ...rules, minOrganizations: 2 }, now)).toMatchObject({ priceUsd: '2000', organizations: 2 });
    const spread = [trade('2000', '1', 'a', 'b'), trade('2150', '1', 'b', 'c')];
    expect(policyPrice('ETH', spread, { priceUsd: '2000', source: 'reference' }, { ...rules, maxDeviationBasisPoints: 500n }, now)).toMatchObject({ source: 'reference' });
    expect(policyPrice('ETH', spread, { priceUsd: '2000', source: 'reference' }, { ...rules, maxDeviationBasisPoints: 800n }, now)).toMatchObject({ source: 'orderbook:ETH-USDC', priceUsd: '2000' });
  });
});

describe('withinDeviation', () => {
  test('inclusive on both sides of the reference', () => {
    expect(withinDeviation(110n, 100n, 1_000n)).toBe(true);
    expect(withinDeviation(90n, 100n, 1_000n)).toBe(true);
    expect(withinDeviation(111n, 100n, 1_000n)).toBe(false);
    expect(withinDeviation(89n, 100n, 1_000n)).toBe(false);
  });
});
