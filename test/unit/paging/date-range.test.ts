import { isDateRangeBound, isOrderedDateRange } from '../../../src/platform/db/date-range';

test.each(['2026-01-31', '2026-02-28T23:59Z', '2026-01-31T12:00:00Z', '2026-01-31T12:00:00.123456+02:00', '2024-02-29'])('%s is a bound', (text) => {
  expect(isDateRangeBound(text)).toBe(true);
});

test.each(['', 'yesterday', '2026-02-30', '2025-02-29', '2026-13-01', '2026-01-31T12:00:00', '2026-01-31T24:00:00Z', '2026-W05', '1769860800', '2026-01-31 12:00:00Z'])(
  '%p is not a bound',
  (text) => {
    expect(isDateRangeBound(text)).toBe(false);
  },
);

test('to includes its whole span: the day of a date, the millisecond of a shown createdAt', () => {
  expect(isOrderedDateRange({ from: '2026-01-31T23:59:59.999Z', to: '2026-01-31' })).toBe(true);
  expect(isOrderedDateRange({ from: '2026-02-01T00:00:00Z', to: '2026-01-31' })).toBe(false);
  expect(isOrderedDateRange({ from: '2026-01-31T12:00:00.123Z', to: '2026-01-31T12:00:00.123Z' })).toBe(true);
  expect(isOrderedDateRange({ from: '2026-01-31T12:00:00.124Z', to: '2026-01-31T12:00:00.123Z' })).toBe(false);
  expect(isOrderedDateRange({ from: 'bad', to: '2026-01-31' })).toBe(true);
});
