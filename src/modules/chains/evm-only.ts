import { KeelError } from '../../platform/errors';

/**
 * What stays EVM-only while Solana grows beside it (issue 35): each is refused on a Solana cluster
 * with 400 INVALID_NETWORK naming the feature. README lists them; a feature leaves this list when
 * it works on Solana.
 */
export const EVM_ONLY_FEATURES = {
  swaps: 'Swaps',
  settlementRules: 'Settlement rules',
  orderBookSettlement: 'Order-book settlement',
  agentWallets: 'Agent wallets (agents\' signing)',
  signing: 'Signing (messages, typed data, transactions)',
  nfts: 'NFTs',
  transferCancellation: 'Cancelling a transfer (a Solana transaction not landed expires with its blockhash within about a minute)',
} as const;

export type EvmOnlyFeature = keyof typeof EVM_ONLY_FEATURES;

/** Refuses an EVM-only feature on a chain that is not EVM (INVALID_NETWORK, the feature named in the message and details). */
export function refuseUnlessEvm(chain: { isEvmCompatible: boolean; name: string }, feature: EvmOnlyFeature, field?: string): void {
  if (chain.isEvmCompatible) return;
  const named = EVM_ONLY_FEATURES[feature];
  throw new KeelError('INVALID_NETWORK', `${named}: not available on ${chain.name} (Solana); EVM chains only for now`, {
    feature: named,
    ...(field ? { fields: [{ field, error: 'INVALID_FIELD' }] } : {}),
  });
}
