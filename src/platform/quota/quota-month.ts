/** A UTC calendar month: the period of a monthly quota. */
export interface QuotaMonth {
  /** `2026-11` */
  key: string;
  /** Its first instant, 00:00 UTC on the 1st. */
  start: Date;
  /** The next month's first instant: when the quota resets. */
  end: Date;
}

export function quotaMonthOf(at: Date): QuotaMonth {
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  return { key: at.toISOString().slice(0, 7), start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)) };
}

/** The UTC day of an instant, `2026-11-27`: the usage record's day. */
export function usageDayOf(at: Date): string {
  return at.toISOString().slice(0, 10);
}
