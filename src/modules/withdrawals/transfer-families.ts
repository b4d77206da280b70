import { KeelError } from '../../platform/errors';
import type { ChainPort } from '../../platform/chain-port/chain-port';
import type { ChainNetwork, ChainNetworks, SolanaNetwork } from '../chains';
import { addressOn } from '../../platform/chain-port/addresses';

/**
 * A chain a transfer is sent on: its port (balances, fees), and the network its family's sender
 * needs (TransactionSender for EVM: nonces, fee bumps, contract calls; SolanaSender for a Solana
 * cluster: recent blockhashes, rent). The withdrawals module branches on `family` only where the
 * shapes differ: which sender, how funds are checked (rent on Solana), a recipient's format.
 */
export type TransferChain = { family: 'evm'; blockchainId: string; port: ChainPort; network: ChainNetwork } | { family: 'solana'; blockchainId: string; port: ChainPort; solana: SolanaNetwork };

/** The chain a transfer is sent on, as this deployment serves it (undefined: not served here). */
export function transferChain(networks: ChainNetworks, blockchainId: string): TransferChain | undefined {
  const network = networks.get(blockchainId);
  if (network) return { family: 'evm', blockchainId, port: network.port, network };
  const solana = networks.solana(blockchainId);
  return solana ? { family: 'solana', blockchainId, port: solana.port, solana } : undefined;
}

/**
 * A line's recipient on its chain: a checksummed EVM address, or a Solana address (base58 of 32
 * bytes); 400 INVALID_ADDRESS otherwise. Read from the registry row, before any port is at hand: the
 * two formats' error messages differ (the spec names the field, and a checksum rule exists on EVM only).
 */
export function recipientOn(chain: { isEvmCompatible: boolean }, text: string, field: string): string {
  const address = addressOn(chain.isEvmCompatible ? 'evm' : 'solana', text);
  if (address !== null) return address;
  throw invalidRecipient(field, chain.isEvmCompatible ? `${field} is not a valid EVM address (format or checksum)` : `${field} is not a valid Solana address (base58 of 32 bytes)`);
}

/** 400 INVALID_ADDRESS naming the recipient's field. */
export function invalidRecipient(field: string, message: string): KeelError {
  return new KeelError('INVALID_ADDRESS', message, { fields: [{ field, error: 'INVALID_FIELD' }] });
}

/** The decimals of the native coin a line's fee is paid in (ETH and the like: 18; SOL: 9). */
export function feeDecimals(chain: { isEvmCompatible: boolean }): number {
  return chain.isEvmCompatible ? 18 : 9;
}
