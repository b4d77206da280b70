import type { Knex } from 'knex';
import type { PageWindow } from '../../platform/paging';
import type { AssetView, BlockchainView } from '../chains';
import type { SendingWallet } from '../wallets';
import type { PolicyLine } from './transfer-policy';
import type { ChainPort } from '../../platform/chain-port/chain-port';
import { ShownFailure } from '../../platform/shown-reason';

/** The words of transfers: what is sent, the views the API shows, and the ports other modules fill. */

export type TransferKind = 'withdrawal' | 'sweep' | 'gas_topup' | 'agent_payment' | 'swap' | 'trading_deposit' | 'signing';

/** A line Keel queues itself: a send of `rawAmount`, or a contract `call` (a DEX approval or swap) that moves it. */
export interface QueuedLine {
  asset: AssetView;
  recipient: string;
  rawAmount: bigint;
  /** An NFT line: the token id it sends (rawAmount is how many: 1 for ERC-721). */
  tokenId?: bigint;
  /** Runs only after this line confirmed. */
  afterItemId?: string;
  call?: { to: string; data: string; value: bigint };
}

/** One line of a transfer as the caller asks for it: whole units of an asset to a recipient. */
export interface TransferLine {
  assetId: string;
  recipient: string;
  amount: string;
  /** An NFT collection's line: the token id (decimal); amount is how many (ERC-721: "1"). */
  tokenId?: string;
}

export interface TransferFilter extends PageWindow {
  status?: string;
  masterWalletId?: string;
}

export interface TransferItemView {
  id: string;
  position: number;
  asset: AssetView;
  recipient: string;
  amount: string;
  rawAmount: string;
  /** The NFT the line sends; null for a fungible line. */
  tokenId: string | null;
  status: string;
  txHash: string | null;
  replacedTxHashes: string[];
  cancelTxHashes: string[];
  nonce: string | null;
  blockNumber: string | null;
  gasFee: string | null;
  error: string | null;
  submittedAt: Date | null;
}

/** The API's transfer resource: an outgoing withdrawal, sweep or gas top-up and its lines. */
export interface TransferView {
  id: string;
  kind: string;
  status: string;
  masterWalletId: string;
  addressId: string | null;
  blockchainId: string;
  fromAddress: string;
  note: string | null;
  items: TransferItemView[];
  /** The API key that asked for it (an access token: the key that issued it); null when Keel arranged it itself. */
  requestedBy: string | null;
  /** The API key that approved or rejected it while it was held. */
  decidedBy: string | null;
  decidedAt: Date | null;
  cancelRequestedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface GasEstimateView {
  assets: { amount: string; asset: AssetView; blockchain: BlockchainView; destinationAddress: string }[];
  estimatedFee: { amount: string; value: string; callGasLimit: string; verificationGasLimi: string };
}

/** A line's claim on a wallet's funds in the trading ledger. */
export interface FundsLine {
  organizationId: string;
  /** The deposit address id, or the master wallet id for its own address. */
  walletId: string;
  assetId: string;
  rawAmount: bigint;
  itemId: string;
}

/**
 * Where transfers take their funds from besides the chain: the trading ledger, so that what is
 * locked in open orders cannot also be withdrawn.
 */
export interface TransferFunds {
  spendable(trx: Knex.Transaction, walletId: string, assetId: string): Promise<bigint>;
  /** Takes the lines' amounts; INSUFFICIENT_FUNDS when the wallet's available balance is short. */
  reserve(trx: Knex.Transaction, lines: FundsLine[]): Promise<void>;
  /** Gives back what reserve took (a rejected or failed line). */
  release(trx: Knex.Transaction, lines: FundsLine[]): Promise<void>;
}

/** A line checked and priced: the asset it moves and its amount in the smallest unit. */
export interface PricedLine extends PolicyLine {
  asset: AssetView;
  recipient: string;
  tokenId?: bigint;
}

/** Told of a transfer an administrator decided on (rejected, or approved): its kind and its lines. */
export type TransferDecisionListener = (trx: Knex.Transaction, decided: { transferId: string; kind: TransferKind; itemIds: string[] }) => Promise<void>;

/**
 * What a send from a deposit address under enableGaslessWithdraw needs in native coin, for its
 * master wallet to top it up to before the send (GasPayer): its lines' gas with headroom and the
 * coin they send, beside what the address's other lines still to be sent will spend.
 */
/** Gas Keel sets aside or tops up is priced at twice today's fee, so it still covers the send if fees rise meanwhile. */
export const GAS_HEADROOM = 2n;

/** Whether the wallet gets its gas from its master wallet: a deposit address under enableGaslessWithdraw (a master wallet pays its own). */
export function topsUpGas(wallet: SendingWallet): boolean {
  return !!wallet.addressId && wallet.configurations.enableGaslessWithdraw;
}

export interface GasFromMaster {
  network: { blockchainId: string; port: ChainPort };
  needed: bigint;
}

/** A send checked and priced, ready to record (TransferService.prepare). */
export interface PreparedTransfer {
  wallet: SendingWallet;
  blockchainId: string;
  lines: PricedLine[];
  status: 'PENDING_APPROVAL' | 'QUEUED';
  /** The gas top-up it is recorded after, if it needs one (null: the address pays its own gas). */
  gas: GasFromMaster | null;
}

/**
 * The master wallet that would pay a deposit address's gas holds a deposit from a sanctioned address
 * that no admin has released: nothing leaves it automatically, so the send that needs the gas is
 * held too (not failed), and goes once the deposit is released.
 */
export class GasPayerHeld extends ShownFailure {
  constructor(masterWalletAddress: string) {
    super(`held: the master wallet ${masterWalletAddress}, which pays this address's gas, received a deposit from a sanctioned address, not released yet`);
  }
}

/**
 * Pays a deposit address's gas from its master wallet before a send of its (GasTopUps): the id of
 * the `gas_topup` line the send waits for, or null when the address already holds `gasCost`.
 */
export interface GasPayer {
  ensure(trx: Knex.Transaction, source: SendingWallet, network: { blockchainId: string; port: ChainPort }, gasCost: bigint, opts?: { status?: 'QUEUED' | 'PENDING_APPROVAL' }): Promise<string | null>;
}

/** Statuses a line passes through before it is final. */
export const OPEN_ITEM_STATUSES = ['PENDING_APPROVAL', 'QUEUED', 'SIGNED', 'SUBMITTED'] as const;

