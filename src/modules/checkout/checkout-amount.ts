import { KeelError } from '../../platform/errors';
import { parseUnits } from '../../platform/decimal';

/** uint256's range: what a token transfer and an EIP-681 payment URI carry, and what the record holds (78 digits). */
const UINT256_LIMIT = 2n ** 256n;

/**
 * The base units of an amount a checkout asks for (an intent's, a link's fixed amount, a payer's
 * open amount): above 0, exact in the asset's decimals and within uint256, else 422 on `amount`
 * (a longer amount is the caller's mistake, and would be a payment URI nobody can pay).
 */
export function askedUnits(amount: string, asset: { decimals: number; symbol: string }): bigint {
  const units = parseUnits(amount, asset.decimals);
  if (units !== null && units >= UINT256_LIMIT) throw KeelError.invalidField('amount', 'is too large');
  if (units === null || units <= 0n) throw KeelError.invalidField('amount', `must be above 0 with at most ${asset.decimals} decimals (${asset.symbol})`);
  return units;
}
