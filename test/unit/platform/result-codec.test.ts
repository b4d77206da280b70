import { decodeResult, encodeResult } from '../../../src/platform/result-codec';

test('a recorded result comes back with its Dates and bigints, at any depth', () => {
  const value = { id: 'k1', createdAt: new Date('2026-01-02T03:04:05.678Z'), raw: 12345678901234567890n, items: [{ at: new Date(0), n: 1n, text: '2026-01-02T03:04:05.678Z' }], none: null };
  const back = decodeResult<typeof value>(encodeResult(value));
  expect(back).toEqual(value);
  expect(back.createdAt).toBeInstanceOf(Date);
  expect(typeof back.items[0].n).toBe('bigint');
  expect(typeof back.items[0].text).toBe('string');
});

test('undefined and plain values round-trip', () => {
  expect(decodeResult(encodeResult(undefined))).toBeUndefined();
  expect(decodeResult(encodeResult('x'))).toBe('x');
  expect(decodeResult(encodeResult({ orderId: 'o', rejected: undefined }))).toEqual({ orderId: 'o' });
});
