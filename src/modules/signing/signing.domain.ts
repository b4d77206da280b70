import type { PageWindow } from '../../platform/paging';

/** The words of signing: what may be signed, the requests' states, and the views the API shows. */

export const SigningKind = {
  MESSAGE: 'MESSAGE',
  TYPED_DATA: 'TYPED_DATA',
  TRANSACTION: 'TRANSACTION',
} as const;
export type SigningKind = (typeof SigningKind)[keyof typeof SigningKind];

/**
 * PENDING_APPROVAL: held by security.requireApprovalForTransfers (a transfer of kind `signing`);
 * QUEUED: a transaction to broadcast, waiting for the transaction sender; SIGNED: the signature made
 * (a broadcast transaction signed and sent); CONFIRMED: a broadcast transaction mined; REFUSED: the
 * checks refused it; REJECTED: an administrator refused it; FAILED: a broadcast that could not be made.
 */
export const SigningStatus = {
  PENDING_APPROVAL: 'PENDING_APPROVAL',
  QUEUED: 'QUEUED',
  SIGNED: 'SIGNED',
  CONFIRMED: 'CONFIRMED',
  REFUSED: 'REFUSED',
  REJECTED: 'REJECTED',
  FAILED: 'FAILED',
} as const;
export type SigningStatus = (typeof SigningStatus)[keyof typeof SigningStatus];

/** The one risk a request can acknowledge: the signature lets someone else spend the wallet's tokens. */
export const SigningRisk = {
  SPENDING_APPROVAL: 'SPENDING_APPROVAL',
} as const;
export type SigningRisk = (typeof SigningRisk)[keyof typeof SigningRisk];

/** How a message's text is read: UTF-8, or bytes written as 0x-hex. */
export const MessageEncoding = {
  UTF8: 'UTF8',
  HEX: 'HEX',
} as const;
export type MessageEncoding = (typeof MessageEncoding)[keyof typeof MessageEncoding];

/** What a risky signature grants, each named for the reader of a refusal or an audit record. */
export type RiskFinding =
  | 'PERMIT' // EIP-2612 Permit, DAI-style Permit, ERC-721 Permit
  | 'PERMIT2' // Uniswap Permit2 typed data or its approve()
  | 'SPENDER_FIELD' // typed data whose primary type names a spender or operator
  | 'TRANSFER_AUTHORIZATION' // EIP-3009 TransferWithAuthorization / ReceiveWithAuthorization: a transfer anyone holding the signature can make
  | 'CALL_AUTHORIZATION' // typed data that makes a call Keel cannot read as the signer's own: a Safe transaction, a user operation, any bytes data / functionSignature / callData
  | 'DIGEST_SIGNATURE' // a message of exactly 32 bytes: it may be the hash of anything (a Safe transaction's, which a Safe takes as its owner's approval), signed blind
  | 'SET_APPROVAL_FOR_ALL' // setApprovalForAll(operator, true)
  | 'UNLIMITED_APPROVE' // approve / increaseAllowance of 2^255 or more
  | 'APPROVE_ABOVE_HOLDINGS'; // approve / increaseAllowance of more than the address holds of the token

/** EIP-191 personal_sign: a UTF-8 text, or bytes written as 0x-hex with encoding HEX. */
export interface SignMessage {
  message: string;
  encoding?: MessageEncoding | null;
  acknowledgeRisk?: SigningRisk | null;
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
