import { toUnitsFloor } from '../../platform/decimal';
import { KeelError } from '../../platform/errors';
import type { WalletConfigurations } from '../wallets/wallet-configurations';

export interface PolicyLine {
  asset: { decimals: number; symbol: string };
  recipient: string;
  rawAmount: bigint;
}

/**
 * configurations.security: every line must go to an allowed recipient (when the list is not empty)
 * and move at most maxTransferAmount, read in the units of the line's own asset.
 */
export function checkTransferPolicy(security: WalletConfigurations['security'], lines: PolicyLine[]): void {
  const allowed = new Set(security.allowedRecipients.map((a) => a.toLowerCase()));
  lines.forEach((l, i) => {
    if (allowed.size && !allowed.has(l.recipient.toLowerCase())) {
      throw new KeelError('FORBIDDEN', `assets.${i}.recipient is not in the wallet's security.allowedRecipients`, { fields: [{ field: `assets.${i}.recipient`, error: 'INVALID_FIELD' }] });
    }
    if (security.maxTransferAmount && l.rawAmount > toUnitsFloor(security.maxTransferAmount, l.asset.decimals)) {
      throw new KeelError('FORBIDDEN', `assets.${i}.amount exceeds the wallet's security.maxTransferAmount (${security.maxTransferAmount} ${l.asset.symbol})`, {
        fields: [{ field: `assets.${i}.amount`, error: 'INVALID_FIELD' }],
      });
    }
  });
}
