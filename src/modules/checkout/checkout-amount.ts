import { KeelError } from '../../platform/errors';
import { exactInDecimals, parseUnits } from '../../platform/decimal';

/**
 * The most one payment carries, in base units, by chain family: uint256 on EVM (a token transfer,
 * an EIP-681 payment URI, and what the record holds: 78 digits); u64 on Solana (lamports, and an SPL
 * transfer's amount: no mint can issue more).
 */
const EVM_LIMIT = 2n ** 256n;
const SOLANA_LIMIT = 2n ** 64n;

/**
 * The base units of an amount a checkout asks for (an intent's, a link's fixed amount, a payer's
 * open amount): above 0, exact in the asset's decimals and within what one transfer on the asset's
 * chain carries, else 422 on `amount` (a longer amount is the caller's mistake, and would be a
 * payment request nobody can pay).
 */
export function askedUnits(amount: string, asset: { decimals: number; symbol: string; blockchain: { isEvmCompatible: boolean } }): bigint {
  const units = parseUnits(amount, asset.decimals);
  if (units !== null && units >= EVM_LIMIT) throw KeelError.invalidField('amount', 'is too large');
  if (units !== null && !asset.blockchain.isEvmCompatible && units >= SOLANA_LIMIT) {
    throw KeelError.invalidField('amount', `is too large: a Solana transfer carries at most ${SOLANA_LIMIT - 1n} base units (${asset.symbol} has ${asset.decimals} decimals)`);
  }
  if (units === null || units <= 0n) throw KeelError.invalidField('amount', exactInDecimals(asset.decimals, { of: asset.symbol }));
  return units;
}
