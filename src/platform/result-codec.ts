/**
 * A service's result as text and back, keeping the values JSON cannot: Date and bigint. Used for
 * results recorded on an idempotency claim, which a retry must get back as the first attempt had
 * them. Other class instances come back as plain objects of their own enumerable fields.
 */
const DATE = '$date';
const BIGINT = '$bigint';

export function encodeResult(value: unknown): string {
  return JSON.stringify({ value }, function (this: Record<string, unknown>, key: string, v: unknown) {
    const raw = this[key];
    if (raw instanceof Date) return { [DATE]: raw.toISOString() };
    if (typeof raw === 'bigint') return { [BIGINT]: raw.toString() };
    return v;
  });
}

export function decodeResult<R>(text: string): R {
  return (
    JSON.parse(text, (_key, v: unknown) => {
      if (v && typeof v === 'object' && !Array.isArray(v)) {
        const keys = Object.keys(v);
        if (keys.length === 1 && keys[0] === DATE) return new Date((v as Record<string, string>)[DATE]);
        if (keys.length === 1 && keys[0] === BIGINT) return BigInt((v as Record<string, string>)[BIGINT]);
      }
      return v;
    }) as { value: R }
  ).value;
}
