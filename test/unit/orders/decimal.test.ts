import fc from 'fast-check';
import { divideCeil, divideExact, exactInDecimals, formatScaled, normalizeDecimal, parseDecimal, parseUnits, toUnits, toUnitsCeil, toUnitsFloor } from '../../../src/platform/decimal';
import { feeCeil } from '../../../src/engine';

const d = (s: string) => parseDecimal(s)!;

describe('order-book decimals', () => {
  it('parses and formats decimal strings exactly', () => {
    expect(parseDecimal('12.50')).toEqual({ int: 1250n, scale: 2 });
    expect(parseDecimal('0')).toEqual({ int: 0n, scale: 0 });
    for (const bad of ['', '-1', '1.', '.5', '01', '1e3', '1,5', ' 1']) expect(parseDecimal(bad)).toBeNull();
    expect(formatScaled(1250n, 2)).toBe('12.5');
    expect(formatScaled(5n, 3)).toBe('0.005');
    expect(formatScaled(2000n, 3)).toBe('2');
    expect(formatScaled(-15n, 1)).toBe('-1.5');
    expect(normalizeDecimal('2000.000000000000')).toBe('2000');
    expect(normalizeDecimal('0.00100')).toBe('0.001');
  });

  it('converts to base units only when exact', () => {
    expect(toUnits(d('1.5'), 18)).toBe(1_500_000_000_000_000_000n);
    expect(toUnits(d('0.001'), 6)).toBe(1000n);
    expect(toUnits(d('0.0000001'), 6)).toBeNull();
    expect(toUnits(d('1.000000'), 0)).toBe(1n);
  });

  it("accepts zeros past an asset's decimals and refuses a non-zero digit there, with the one sentence every amount's 422 says", () => {
    expect(parseUnits('10.0000000', 6)).toBe(10_000_000n);
    expect(parseUnits('10.0000001', 6)).toBeNull();
    expect(parseUnits('2.000', 0)).toBe(2n);
    expect(parseUnits('2.5', 0)).toBeNull();
    expect(exactInDecimals(6, { of: 'USDC' })).toBe("must be a positive decimal string with no non-zero digit after the first 6 decimals (USDC's)");
    expect(exactInDecimals(0, { of: 'KNFT' })).toBe('must be a positive decimal string with no non-zero digit after the point (KNFT has no decimals)');
    expect(exactInDecimals(2, { what: 'a percentage from 0 to 50' })).toBe('must be a percentage from 0 to 50 with no non-zero digit after the first 2 decimals');
  });

  it('converts an inclusive bound finer than the base unit to base units: a minimum rounded up, a maximum down', () => {
    expect(toUnitsCeil('10.0000005', 6)).toBe(10_000_001n);
    expect(toUnitsFloor('10.0000005', 6)).toBe(10_000_000n);
    expect(toUnitsCeil('10', 6)).toBe(10_000_000n);
    expect(toUnitsCeil('10.000000', 6)).toBe(10_000_000n);
    expect(toUnitsCeil('0', 18)).toBe(0n);
  });

  it('divides exactly into ticks and lots, or refuses', () => {
    expect(divideExact(d('2000'), d('0.01'))).toBe(200_000n);
    expect(divideExact(d('100.005'), d('0.01'))).toBeNull();
    expect(divideExact(d('1.5'), d('0.001'))).toBe(1500n);
    expect(divideExact(d('0.0005'), d('0.001'))).toBeNull();
    expect(divideCeil(d('1'), d('0.3'))).toBe(4n);
    expect(divideCeil(d('0.9'), d('0.3'))).toBe(3n);
  });

  it('round-trips any decimal through parse and format', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 24 }), (int, scale) => {
        const text = formatScaled(int, scale);
        const back = parseDecimal(text)!;
        expect(back.int * 10n ** BigInt(scale)).toBe(int * 10n ** BigInt(back.scale));
      }),
    );
  });

  it('a fee is the rate of the quote amount rounded up to a whole base unit, never more', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 40n }), fc.integer({ min: 0, max: 100_000 }), (amount, ppm) => {
        const fee = feeCeil(amount, ppm);
        expect(fee * 1_000_000n).toBeGreaterThanOrEqual(amount * BigInt(ppm));
        expect((fee - 1n) * 1_000_000n).toBeLessThan(amount * BigInt(ppm));
      }),
    );
  });
});
