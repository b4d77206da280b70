import { PriceService } from '../../../src/modules/prices/price.service';
import type { PriceSource, TokenPrice } from '../../../src/modules/prices/price-source';
import { parseReferences, ReferencePrices } from '../../../src/modules/prices/reference-prices';

/** A source that counts how often it is asked and answers from a table (its policy prices from a second one). */
class TableSource implements PriceSource {
  asked = 0;
  constructor(
    readonly table: Record<string, string | null>,
    readonly policyTable: Record<string, string | null> = table,
  ) {}
  async price(blockchain: string, asset: string): Promise<TokenPrice> {
    return this.answer(this.table, blockchain, asset);
  }
  async policyPrice(blockchain: string, asset: string): Promise<TokenPrice> {
    return this.answer(this.policyTable, blockchain, asset);
  }
  private answer(table: Record<string, string | null>, blockchain: string, asset: string): TokenPrice {
    this.asked++;
    const p = table[asset] ?? null;
    return { blockchain, asset, priceUsd: p, source: p ? 'table' : 'none', asOf: p ? new Date() : null, unavailableReason: p ? undefined : 'not in table' };
  }
}

describe('PriceService', () => {
  test('serves a price from cache within PRICE_CACHE_SECONDS and asks the source again with the cache off', async () => {
    const source = new TableSource({ ETH: '2000' });
    const cached = new PriceService(source, 60);
    await cached.prices([{ blockchain: '', asset: 'ETH' }]);
    await cached.prices([{ blockchain: '', asset: 'ETH' }]);
    expect(source.asked).toBe(1);
    const uncached = new PriceService(source, 0);
    await uncached.prices([{ blockchain: '', asset: 'ETH' }]);
    await uncached.prices([{ blockchain: '', asset: 'ETH' }]);
    expect(source.asked).toBe(3);
  });

  test('a request that fills the cache past its bound still answers every symbol it asked, cached ones included', async () => {
    const service = new PriceService(new TableSource({ ETH: '2000' }), 60);
    await service.pricesBySymbol(['ETH']);
    for (let i = 0; i < 99; i++) await service.pricesBySymbol(Array.from({ length: 100 }, (_, j) => `T${i}-${j}`));
    const res = await service.pricesBySymbol(['ETH', ...Array.from({ length: 99 }, (_, j) => `NEW${j}`)]);
    expect(res.data[0]).toMatchObject({ symbol: 'ETH', price: '2000' });
    expect(res.data).toHaveLength(100);
  });

  test('usdValue multiplies the policy price exactly, rounds down to 8 decimals, and is null with the reason without one', async () => {
    const service = new PriceService(new TableSource({ ETH: '1', USDC: '1' }, { ETH: '2000.123456789', USDC: '1' }), 0);
    expect(await service.usdValue('', 'ETH', '0.5')).toMatchObject({ amountUsd: '1000.06172839', price: { priceUsd: '2000.123456789' } });
    expect((await service.usdValue('', 'USDC', '12.34')).amountUsd).toBe('12.34');
    expect(await service.usdValue('', 'DOGE', '1')).toMatchObject({ amountUsd: null, price: { unavailableReason: 'not in table' } });
    // The displayed price (here 1 for ETH) is never what a money decision uses.
    expect((await service.pricesBySymbol(['ETH'])).data[0].price).toBe('1');
    await expect(service.usdValue('', 'ETH', '-1')).rejects.toMatchObject({ code: 'INVALID_FIELD' });
  });
});

describe('reference prices', () => {
  test('a reference pins a symbol; stablecoins are at par otherwise; symbols are case-insensitive', () => {
    const refs = new ReferencePrices('{"eth":"3000","USDT":"0.998"}', 'USDC,USDT');
    expect(refs.lookup('ETH')).toEqual({ priceUsd: '3000', source: 'reference' });
    expect(refs.lookup('usdt')).toEqual({ priceUsd: '0.998', source: 'reference' });
    expect(refs.lookup('USDC')).toEqual({ priceUsd: '1', source: 'par' });
    expect(refs.lookup('DAI')).toBeUndefined();
  });

  test('PRICE_REFERENCES that is not an object of decimal strings is refused at start', () => {
    expect(() => parseReferences('[1]')).toThrow(/PRICE_REFERENCES/);
    // 0 would value the asset at nothing, so every USD limit on agent payments would pass.
    expect(() => parseReferences('{"ETH": "0.000"}')).toThrow('PRICE_REFERENCES: ETH: expected a positive decimal string (0 values the asset at nothing)');
    expect(parseReferences('{"ETH": "0.01"}')).toEqual({ ETH: '0.01' });
    expect(() => parseReferences('{"ETH":"-3"}')).toThrow(/ETH/);
    expect(() => parseReferences('{oops')).toThrow(/not JSON/);
    expect(parseReferences('')).toEqual({});
  });
});
