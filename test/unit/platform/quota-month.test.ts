import { quotaMonthOf, usageDayOf } from '../../../src/platform/quota/quota-month';
import { parseTierQuotas, TIER_MONTHLY_QUOTAS } from '../../../src/platform/quota/tier-quotas';

test('a quota month is the UTC calendar month: from its first instant to the next month\'s, across years', () => {
  expect(quotaMonthOf(new Date('2026-11-30T23:59:59.999Z'))).toEqual({ key: '2026-11', start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-12-01T00:00:00Z') });
  expect(quotaMonthOf(new Date('2026-12-01T00:00:00Z')).key).toBe('2026-12');
  expect(quotaMonthOf(new Date('2026-12-31T12:00:00Z')).end).toEqual(new Date('2027-01-01T00:00:00Z'));
  expect(quotaMonthOf(new Date('2028-02-29T10:00:00Z')).end).toEqual(new Date('2028-03-01T00:00:00Z'));
  // 23:30 on the 31st in New York is already the 1st in UTC.
  expect(quotaMonthOf(new Date('2026-10-31T23:30:00-04:00')).key).toBe('2026-11');
  expect(usageDayOf(new Date('2026-10-31T23:30:00-04:00'))).toBe('2026-11-01');
});

test('MONTHLY_QUOTAS replaces the tiers it names and keeps the others; anything else is refused', () => {
  expect(parseTierQuotas('')).toEqual(TIER_MONTHLY_QUOTAS);
  expect(parseTierQuotas('Business=50, Starter=7')).toEqual({ ...TIER_MONTHLY_QUOTAS, Business: 50, Starter: 7 });
  for (const bad of ['Gold=5', 'Pro=0', 'Pro=1.5', 'Pro', 'Pro=3000000000']) expect(() => parseTierQuotas(bad)).toThrow(/expected Tier=requests/);
});
