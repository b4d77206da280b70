import { z } from 'zod';
import { addressOn, familyOf, sameAddress } from '../../platform/chain-port/addresses';
import { KeelError } from '../../platform/errors';
import { NON_NEGATIVE_DECIMAL_STRING } from '../../platform/decimal';

const decimalString = z.string().regex(NON_NEGATIVE_DECIMAL_STRING, 'must be a non-negative decimal string such as "100.5"');
const optionalDecimal = z.union([z.literal(''), decimalString]);
/**
 * An address of either family: an EVM address (checksum checked), or a Solana one (base58 of 32
 * bytes, case-sensitive). Which family a wallet takes is checked against its own address (assertSweepDestination).
 */
const recipientAddress = z.string().refine((v) => addressOn('evm', v) !== null || addressOn('solana', v) !== null, 'must be an EVM address with a valid checksum or a Solana address');
const optionalAddress = z.union([z.literal(''), recipientAddress]);

/** The spec's master wallet configurations, every field optional on input; unknown keys refused. */
const configurationsPatch = z
  .object({
    aml: z.object({ message: z.string().max(500), provider: z.string().max(100), status: z.string().max(50) }).partial().strict(),
    enableGaslessWithdraw: z.boolean(),
    enableMultiChain: z.boolean(),
    autoSweep: z.object({ enabled: z.boolean(), threshold: decimalString, destinationAddress: optionalAddress }).partial().strict(),
    security: z
      .object({ requireApprovalForTransfers: z.boolean(), maxTransferAmount: optionalDecimal, allowedRecipients: z.array(recipientAddress).max(1_000), allowSpendingApprovals: z.boolean() })
      .partial()
      .strict(),
    monitoring: z.object({ enableBalanceTracking: z.boolean(), enableTransactionTracking: z.boolean(), alertOnLargeTransfers: optionalDecimal }).partial().strict(),
  })
  .partial()
  .strict();

export type ConfigurationsPatch = z.infer<typeof configurationsPatch>;

export interface WalletConfigurations {
  aml: { message: string; provider: string; status: string };
  enableGaslessWithdraw: boolean;
  enableMultiChain: boolean;
  autoSweep: { enabled: boolean; threshold: string; destinationAddress: string };
  /** allowSpendingApprovals: whether signing may grant spending power (a Permit, an unlimited approve), and then only when the request acknowledges it (docs/signing.md). */
  security: { requireApprovalForTransfers: boolean; maxTransferAmount: string; allowedRecipients: string[]; allowSpendingApprovals: boolean };
  monitoring: { enableBalanceTracking: boolean; enableTransactionTracking: boolean; alertOnLargeTransfers: string };
}

export const DEFAULT_CONFIGURATIONS: WalletConfigurations = {
  aml: { message: '', provider: '', status: 'NOT_CHECKED' },
  enableGaslessWithdraw: false,
  enableMultiChain: false,
  autoSweep: { enabled: false, threshold: '0', destinationAddress: '' },
  security: { requireApprovalForTransfers: false, maxTransferAmount: '', allowedRecipients: [], allowSpendingApprovals: false },
  monitoring: { enableBalanceTracking: true, enableTransactionTracking: true, alertOnLargeTransfers: '' },
};

export function checksumOrNull(value: string): string | null {
  return addressOn('evm', value); // null too for a mixed-case one with a wrong checksum
}

/** Validates a patch (422 naming the field at fault) and merges it over `current`, one level deep. */
export function applyConfigurations(current: WalletConfigurations, patch: unknown): WalletConfigurations {
  if (patch === undefined || patch === null) return current;
  const parsed = configurationsPatch.safeParse(patch);
  if (!parsed.success) {
    throw KeelError.validation(parsed.error.issues.map((i) => ({ field: ['configurations', ...i.path].join('.'), error: i.message })));
  }
  const p = parsed.data;
  const next: WalletConfigurations = {
    aml: { ...current.aml, ...p.aml },
    enableGaslessWithdraw: p.enableGaslessWithdraw ?? current.enableGaslessWithdraw,
    enableMultiChain: p.enableMultiChain ?? current.enableMultiChain,
    autoSweep: { ...current.autoSweep, ...p.autoSweep },
    security: { ...current.security, ...p.security },
    monitoring: { ...current.monitoring, ...p.monitoring },
  };
  if (next.autoSweep.destinationAddress) next.autoSweep.destinationAddress = asWritten(next.autoSweep.destinationAddress);
  next.security.allowedRecipients = [...new Set(next.security.allowedRecipients.map(asWritten))];
  return next;
}

/** A valid address as its family writes it (EVM checksummed). */
const asWritten = (a: string): string => addressOn(familyOf(a), a)!;

/**
 * The sections that decide where money may go (transfer cap, approvals, allowed recipients, where
 * sweeps send deposits): changing them needs the `admin` scope, not just `write`.
 */
export const ADMIN_SECTIONS = ['security', 'autoSweep'] as const;

/** The admin-only sections a configurations patch touches, as `configurations.<section>`. */
export function adminSectionsIn(patch: unknown): string[] {
  if (patch === null || typeof patch !== 'object') return [];
  return ADMIN_SECTIONS.filter((s) => s in patch).map((s) => `configurations.${s}`);
}

/**
 * Where sweeps may send a wallet's deposits: the master wallet itself or one of its
 * security.allowedRecipients (an empty list allows only the wallet itself: a sweep moves money
 * without anyone asking, so it never reaches an address the policy does not name), on the wallet's
 * own chain family (its allowed recipients may name both). Compared as the family writes addresses:
 * EVM ignoring case, Solana exactly.
 */
export function sweepDestinationAllowed(configurations: WalletConfigurations, walletAddress: string): boolean {
  const destination = configurations.autoSweep.destinationAddress || walletAddress;
  if (familyOf(destination) !== familyOf(walletAddress)) return false;
  return sameAddress(destination, walletAddress) || configurations.security.allowedRecipients.some((a) => sameAddress(a, destination));
}

/** 422 naming configurations.autoSweep.destinationAddress when sweeps could leave the policy, or the wallet's chain family. */
export function assertSweepDestination(configurations: WalletConfigurations, walletAddress: string): void {
  const destination = configurations.autoSweep.destinationAddress;
  if (destination && familyOf(destination) !== familyOf(walletAddress)) {
    const solana = familyOf(walletAddress) === 'solana';
    throw KeelError.invalidField('configurations.autoSweep.destinationAddress', solana ? 'must be a Solana address: the wallet is on a Solana cluster' : 'must be an EVM address: the wallet is on an EVM chain');
  }
  if (!sweepDestinationAllowed(configurations, walletAddress)) {
    throw KeelError.invalidField('configurations.autoSweep.destinationAddress', "must be the wallet's own address or one of security.allowedRecipients");
  }
}

/** Stored configurations may predate a field: fill in defaults when reading. */
export function readConfigurations(stored: Partial<WalletConfigurations> | null | undefined): WalletConfigurations {
  return applyConfigurations(DEFAULT_CONFIGURATIONS, stored ?? {});
}
