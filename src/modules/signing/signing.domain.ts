import type { PageWindow } from '../../platform/paging';
import type { RiskFinding, SigningRisk } from './signing-checks';

/** The words of signing: what may be signed, the requests' states, and the views the API shows. */

export type SigningKind = 'MESSAGE' | 'TYPED_DATA' | 'TRANSACTION';

/**
 * PENDING_APPROVAL: held by security.requireApprovalForTransfers (a transfer of kind `signing`);
 * QUEUED: a transaction to broadcast, waiting for the transaction sender; SIGNED: the signature made
 * (a broadcast transaction signed and sent); CONFIRMED: a broadcast transaction mined; REFUSED: the
 * checks refused it; REJECTED: an administrator refused it; FAILED: a broadcast that could not be made.
 */
export type SigningStatus = 'PENDING_APPROVAL' | 'QUEUED' | 'SIGNED' | 'CONFIRMED' | 'REFUSED' | 'REJECTED' | 'FAILED';

/** EIP-191 personal_sign: a UTF-8 text, or bytes written as 0x-hex with encoding HEX. */
export interface SignMessage {
  message: string;
  encoding?: 'UTF8' | 'HEX' | null;
}

/** EIP-712: the typed data as eth_signTypedData_v4 takes it. */
export interface SignTypedData {
  typedData: Record<string, unknown>;
  acknowledgeRisk?: SigningRisk | null;
}

/**
 * An EIP-1559 transaction from the wallet's address on one of its chains. Broadcast: sent by the
 * transaction sender, which picks the nonce and fees (given ones are refused). Otherwise signed as
 * given, the missing nonce, gas limit and fees filled from the chain.
 */
export interface SignTransaction {
  blockchainId: string;
  to: string;
  /** Wei, a non-negative integer string. */
  value?: string | null;
  data?: string | null;
  nonce?: number | null;
  gasLimit?: string | null;
  maxFeePerGas?: string | null;
  maxPriorityFeePerGas?: string | null;
  broadcast?: boolean | null;
  acknowledgeRisk?: SigningRisk | null;
}

export interface SignatureFilter extends PageWindow {
  status?: SigningStatus | null;
  kind?: SigningKind | null;
}

/** One signing request and its outcome, as the audit list shows it. */
export interface SignatureView {
  id: string;
  kind: SigningKind;
  status: SigningStatus;
  masterWalletId: string;
  addressId: string | null;
  signer: string;
  /** What was asked to be signed (a message, typed data or a transaction), as given. */
  request: Record<string, unknown>;
  blockchainId: string | null;
  broadcast: boolean;
  risks: RiskFinding[];
  acknowledgedRisk: SigningRisk | null;
  /** The signature (0x, 65 bytes), or the signed raw transaction. */
  signature: string | null;
  txHash: string | null;
  /** The transfer that holds it for approval, or sends it. */
  transferId: string | null;
  errorCode: string | null;
  reason: string | null;
  createdAt: Date;
  updatedAt: Date;
}
