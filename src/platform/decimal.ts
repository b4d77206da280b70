/**
 * Exact decimal arithmetic on bigints: decimal strings at the edge, integers (base units, ticks,
 * lots) inside. Never a float. One mechanism for the order book, custody and transfers.
 */
const DECIMAL = /^(0|[1-9]\d*)(?:\.(\d+))?$/;

/** What the API accepts as a decimal string: at most 60 whole and 36 fraction digits, no leading zeros. */
const EDGE_DIGITS = '(0|[1-9]\\d{0,59})(\\.\\d{1,36})?';
export const DECIMAL_STRING = new RegExp(`^-?${EDGE_DIGITS}$`);
export const NON_NEGATIVE_DECIMAL_STRING = new RegExp(`^${EDGE_DIGITS}$`);

/** A non-negative decimal as an integer and a power-of-ten scale: value = int / 10^scale. */
export interface Scaled {
  int: bigint;
  scale: number;
}

export function parseDecimal(text: string): Scaled | null {
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const frac = m[2] ?? '';
  return { int: BigInt(m[1] + frac), scale: frac.length };
}

export const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** value × 10^decimals if that is a whole number, else null. */
export function toUnits(value: Scaled, decimals: number): bigint | null {
  if (decimals >= value.scale) return value.int * pow10(decimals - value.scale);
  const div = pow10(value.scale - decimals);
  return value.int % div === 0n ? value.int / div : null;
}

/** A decimal string in base units; null when it is not a plain decimal or has a non-zero digit after the first `decimals` ("1.50" at 1 decimal is 15; "1.55" is null). */
export function parseUnits(text: string, decimals: number): bigint | null {
  const value = parseDecimal(text);
  return value ? toUnits(value, decimals) : null;
}

/**
 * What a 422 says a decimal string that parseUnits refused at `decimals` must be: the one sentence for
 * every amount (and rate) parsed so. Digits past the decimals are refused only when one is not zero:
 * zeros there change nothing ("10.0000000" at 6 decimals is exactly 10, and is accepted); a non-zero
 * one ("10.0000001") cannot be carried exactly. `of` names whose decimals they are (an asset's symbol).
 */
export function exactInDecimals(decimals: number, { what = 'a positive decimal string', of }: { what?: string; of?: string } = {}): string {
  if (decimals === 0) return `must be ${what} with no non-zero digit after the point${of ? ` (${of} has no decimals)` : ''}`;
  return `must be ${what} with no non-zero digit after the first ${decimals} decimals${of ? ` (${of}'s)` : ''}`;
}

/** A decimal string in base units, digits beyond `decimals` dropped (a cap or a threshold, never rounded up). */
export function toUnitsFloor(text: string, decimals: number): bigint {
  const value = parseDecimal(text);
  if (!value) throw new Error(`not a decimal: ${text}`);
  return (value.int * pow10(decimals)) / pow10(value.scale);
}

/** A decimal string in base units, rounded up when it has digits beyond `decimals` (an inclusive minimum: nothing below it passes). */
export function toUnitsCeil(text: string, decimals: number): bigint {
  const value = parseDecimal(text);
  if (!value) throw new Error(`not a decimal: ${text}`);
  return divideCeil({ int: value.int * pow10(decimals), scale: 0 }, { int: pow10(value.scale), scale: 0 });
}

/** a / b if that is a whole number, else null (b > 0). */
export function divideExact(a: Scaled, b: Scaled): bigint | null {
  const scale = Math.max(a.scale, b.scale);
  const x = a.int * pow10(scale - a.scale);
  const y = b.int * pow10(scale - b.scale);
  return x % y === 0n ? x / y : null;
}

/** ceil(a / b) for a >= 0, b > 0. */
export function divideCeil(a: Scaled, b: Scaled): bigint {
  const scale = Math.max(a.scale, b.scale);
  const x = a.int * pow10(scale - a.scale);
  const y = b.int * pow10(scale - b.scale);
  return (x + y - 1n) / y;
}

/** Renders int / 10^scale without trailing zeros ("1.50" → "1.5", "2.000" → "2"): base units as whole units. */
export function formatScaled(int: bigint, scale: number): string {
  const negative = int < 0n;
  let digits = (negative ? -int : int).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    const whole = digits.slice(0, digits.length - scale);
    const frac = digits.slice(digits.length - scale).replace(/0+$/, '');
    digits = frac ? `${whole}.${frac}` : whole;
  }
  return negative ? `-${digits}` : digits;
}

/** `count` steps of `step` (ticks of a tick size, lots of a lot size) as a decimal string. */
export function formatMultiple(step: Scaled, count: bigint): string {
  return formatScaled(count * step.int, step.scale);
}

export function formatDecimal(value: Scaled): string {
  return formatScaled(value.int, value.scale);
}

/** Normalises a decimal string as PostgreSQL NUMERIC returns it. */
export function normalizeDecimal(text: string): string {
  const negative = text.startsWith('-');
  const parsed = parseDecimal(negative ? text.slice(1) : text);
  if (!parsed) return text;
  return formatScaled(negative ? -parsed.int : parsed.int, parsed.scale);
}

/** A percentage to hundredths ("0.5", "10", "0.50") in basis points; throws when it is not one. */
export function percentBasisPoints(text: string): bigint {
  const bp = parseUnits(text, 2);
  if (bp === null) throw new Error(`'${text}' ${exactInDecimals(2, { what: 'a percentage' })}`);
  return bp;
}
