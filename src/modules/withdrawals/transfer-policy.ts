import { toUnitsFloor } from '../../platform/decimal';
import { KeelError } from '../../platform/errors';
import { sameAddress } from '../../platform/chain-port/addresses';
import type { WalletConfigurations } from '../wallets';

/** A recipient as the sanctions lists see it: the list entries it matched, none when it is not sanctioned. */
export interface RecipientScreening {
  sanctioned: boolean;
  matches: { list: string; address: string }[];
}

/** Screens a recipient against the sanctions lists (the AML module's SanctionsScreen, wired in services.ts). */
export interface RecipientScreen {
  screen(address: string): RecipientScreening;
}

/**
 * No line may go to an address on a sanctions list: 403 SANCTIONED_ADDRESS naming the line and
 * carrying the list entries it matched. Withdrawals, approvals and Keel's own sweeps all pass here.
 */
export function checkSanctions(screen: RecipientScreen, lines: { recipient: string }[], fieldOf: (i: number) => string = (i) => `assets.${i}.recipient`): void {
  lines.forEach((l, i) => {
    const result = screen.screen(l.recipient);
    if (result.sanctioned) {
      throw new KeelError('SANCTIONED_ADDRESS', `${fieldOf(i)} ${l.recipient} is on a sanctions list (${result.matches.map((m) => m.list).join(', ')}); Keel does not send to it nor sign for it`, {
        fields: [{ field: fieldOf(i), error: 'SANCTIONED_ADDRESS' }],
        matches: result.matches,
      });
    }
  });
}

export interface PolicyLine {
  asset: { id: string; decimals: number; symbol: string };
  recipient: string;
  rawAmount: bigint;
}

function refused(field: string, message: string): KeelError {
  return new KeelError('FORBIDDEN', message, { fields: [{ field, error: 'INVALID_FIELD' }] });
}

/**
 * configurations.security: every line must go to an allowed recipient (when the list is not empty),
 * and the request's total of each asset may be at most maxTransferAmount, read in that asset's
 * units: splitting an amount over several lines moves no more than one line could.
 */
export function checkTransferPolicy(security: Pick<WalletConfigurations['security'], 'allowedRecipients' | 'maxTransferAmount'>, lines: PolicyLine[], fieldOf: (i: number, part: 'recipient' | 'amount') => string = (i, part) => `assets.${i}.${part}`): void {
  const allowed = security.allowedRecipients;
  const totals = new Map<string, bigint>();
  lines.forEach((l, i) => {
    if (allowed.length && !allowed.some((a) => sameAddress(a, l.recipient))) {
      throw refused(fieldOf(i, 'recipient'), `${fieldOf(i, 'recipient')} is not in the wallet's security.allowedRecipients`);
    }
    if (!security.maxTransferAmount) return;
    const total = (totals.get(l.asset.id) ?? 0n) + l.rawAmount;
    totals.set(l.asset.id, total);
    if (total > toUnitsFloor(security.maxTransferAmount, l.asset.decimals)) {
      throw refused(fieldOf(i, 'amount'), `The request's total of ${l.asset.symbol} exceeds the wallet's security.maxTransferAmount (${security.maxTransferAmount} ${l.asset.symbol}) at ${fieldOf(i, 'amount')}`);
    }
  });
}

