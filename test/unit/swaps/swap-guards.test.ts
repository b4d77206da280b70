import { shortfallBasisPoints, swapFloor, swapRefusal } from '../../../src/modules/swaps/swap-guards';

describe('swap guards', () => {
  test("the router's floor is the stricter of the slippage tolerance's and the caller's minimumOutput", () => {
    expect(swapFloor(990n, null)).toBe(990n);
    expect(swapFloor(990n, 995n)).toBe(995n);
    expect(swapFloor(990n, 900n)).toBe(990n);
  });

  test("a caller's minimum above what the pools give now is refused before anything is sent", () => {
    expect(swapRefusal(1_000n, 1_001n, 0n, 300n)).toBe('BELOW_CALLER_MINIMUM');
    expect(swapRefusal(1_000n, 1_000n, 0n, 300n)).toBeNull();
    expect(swapRefusal(1_000n, null, 0n, 300n)).toBeNull();
  });

  test('a price impact above the cap is refused; at the cap it passes; a raised cap lets it through', () => {
    // 3% is 30,000 ppm; the cap is in basis points.
    expect(swapRefusal(1_000n, null, 30_000n, 300n)).toBeNull();
    expect(swapRefusal(1_000n, null, 30_001n, 300n)).toBe('PRICE_IMPACT_TOO_HIGH');
    expect(swapRefusal(1_000n, null, 30_001n, 500n)).toBeNull();
  });

  test('the shortfall against reference prices, in basis points, across decimals', () => {
    const usdc = (raw: bigint) => ({ raw, decimals: 6, priceUsd: '1' });
    const eth = (raw: bigint, priceUsd = '2000') => ({ raw, decimals: 18, priceUsd });
    // 2,000 USDC for 1 ETH at 2,000: nothing lost.
    expect(shortfallBasisPoints(usdc(2_000_000_000n), eth(10n ** 18n))).toBe(0n);
    // 2,000 USDC for 0.9 ETH: 10% lost.
    expect(shortfallBasisPoints(usdc(2_000_000_000n), eth(9n * 10n ** 17n))).toBe(1_000n);
    // Rounded up: a hair of loss is 1 basis point.
    expect(shortfallBasisPoints(usdc(2_000_000_000n), eth(10n ** 18n - 1n))).toBe(1n);
    // The pool paying more than the reference is a negative shortfall.
    expect(shortfallBasisPoints(eth(10n ** 18n), usdc(2_200_000_000n))).toBe(-1_000n);
    expect(shortfallBasisPoints(eth(10n ** 18n, '2000.5'), usdc(2_000_500_000n))).toBe(0n);
  });
});
