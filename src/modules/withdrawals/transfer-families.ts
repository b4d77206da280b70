import { isAddress } from '@solana/kit';
import { KeelError } from '../../platform/errors';
import type { ChainNetwork, ChainNetworks, SolanaNetwork } from '../chains';
import { checksummedAddress } from './evm-address';

/**
 * The one place the withdrawals module branches on the chain family (issue 35): how a recipient is
 * read, which network serves a chain, and what a fee is counted in. The sender of a line follows
 * from the network (TransactionSender for EVM, SolanaSender for a Solana cluster). EVM moves behind
 * the chain port next, and this shrinks to nothing.
 */
export type TransferChain = { family: 'evm'; blockchainId: string; network: ChainNetwork } | { family: 'solana'; blockchainId: string; solana: SolanaNetwork };

/** The chain a transfer is sent on, as this deployment serves it (undefined: not served here). */
export function transferChain(networks: ChainNetworks, blockchainId: string): TransferChain | undefined {
  const network = networks.get(blockchainId);
  if (network) return { family: 'evm', blockchainId, network };
  const solana = networks.solana(blockchainId);
  return solana ? { family: 'solana', blockchainId, solana } : undefined;
}

/** A line's recipient on its chain: a checksummed EVM address, or a Solana address (base58 of 32 bytes); 400 INVALID_ADDRESS otherwise. */
export function recipientOn(chain: { isEvmCompatible: boolean }, text: string, field: string): string {
  if (chain.isEvmCompatible) return checksummedAddress(text, field);
  if (typeof text === 'string' && isAddress(text)) return text;
  throw new KeelError('INVALID_ADDRESS', `${field} is not a valid Solana address (base58 of 32 bytes)`, { fields: [{ field, error: 'INVALID_FIELD' }] });
}

/** The decimals of the native coin a line's fee is paid in (ETH and the like: 18; SOL: 9). */
export function feeDecimals(chain: { isEvmCompatible: boolean }): number {
  return chain.isEvmCompatible ? 18 : 9;
}

/** Addresses compare as their family writes them: EVM ignoring case, Solana (base58) exactly. */
export function sameAddress(a: string, b: string): boolean {
  return a.startsWith('0x') ? a.toLowerCase() === b.toLowerCase() : a === b;
}
