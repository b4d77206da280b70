/** The wait before the next attempt after `attempts` failed ones: `baseMs` doubled for each failure after the first, at most `maxMs`. */
export function backoffMs(attempts: number, baseMs: number, maxMs: number): number {
  return Math.min(baseMs * 2 ** Math.max(attempts - 1, 0), maxMs);
}
