import { ethers } from 'ethers';
import { z } from 'zod';
import { isAddress } from '@solana/kit';
import { KeelError } from '../../platform/errors';
import { NON_NEGATIVE_DECIMAL_STRING } from '../../platform/decimal';

const decimalString = z.string().regex(NON_NEGATIVE_DECIMAL_STRING, 'must be a non-negative decimal string such as "100.5"');
const optionalDecimal = z.union([z.literal(''), decimalString]);
const evmAddress = z.string().refine((v) => checksumOrNull(v) !== null, 'must be an EVM address with a valid checksum');
const optionalAddress = z.union([z.literal(''), evmAddress]);
/** A recipient of either family: an EVM address (checksum checked), or a Solana one (base58 of 32 bytes, case-sensitive). */
const recipientAddress = z.string().refine((v) => checksumOrNull(v) !== null || (!v.startsWith('0x') && isAddress(v)), 'must be an EVM address with a valid checksum or a Solana address');

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
  try {
    return /^0x[0-9a-fA-F]{40}$/.test(value) ? ethers.getAddress(value) : null;
  } catch {
    return null; // mixed case with a wrong checksum
  }
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
  if (next.autoSweep.destinationAddress) next.autoSweep.destinationAddress = ethers.getAddress(next.autoSweep.destinationAddress);
  next.security.allowedRecipients = [...new Set(next.security.allowedRecipients.map((a) => (a.startsWith('0x') ? ethers.getAddress(a) : a)))];
  return next;
}

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
 * without anyone asking, so it never reaches an address the policy does not name).
 */
export function sweepDestinationAllowed(configurations: WalletConfigurations, walletAddress: string): boolean {
  const destination = (configurations.autoSweep.destinationAddress || walletAddress).toLowerCase();
  return destination === walletAddress.toLowerCase() || configurations.security.allowedRecipients.some((a) => a.toLowerCase() === destination);
}

/** 422 naming configurations.autoSweep.destinationAddress when sweeps could leave the policy. */
export function assertSweepDestination(configurations: WalletConfigurations, walletAddress: string): void {
  if (!sweepDestinationAllowed(configurations, walletAddress)) {
    throw KeelError.invalidField('configurations.autoSweep.destinationAddress', "must be the wallet's own address or one of security.allowedRecipients");
  }
}

/** Stored configurations may predate a field: fill in defaults when reading. */
export function readConfigurations(stored: Partial<WalletConfigurations> | null | undefined): WalletConfigurations {
  return applyConfigurations(DEFAULT_CONFIGURATIONS, stored ?? {});
}
