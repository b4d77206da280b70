import { ethers } from 'ethers';
import { KeelError } from '../../platform/errors';
import { SigningRisk, type RiskFinding } from './signing.domain';

/**
 * Pure decisions on what a signature would grant (like orders/placement-checks.ts): a transaction's
 * calldata decoded, the spending power a typed data or transaction grants, and whether that may be
 * signed. No I/O: the service gathers the inputs (the wallet's policy, the holdings) and acts on the
 * answer.
 */

export const SPENDING_APPROVAL = SigningRisk.SPENDING_APPROVAL;

/** Why a risky signature is refused: the request did not name the risk, or the wallet's policy does not allow it. */
export type SpendingRefusal = 'RISK_NOT_ACKNOWLEDGED' | 'POLICY_FORBIDS_SPENDING_APPROVALS';

const calls = new ethers.Interface([
  'function transfer(address to, uint256 amount)',
  'function approve(address spender, uint256 amount)',
  'function increaseAllowance(address spender, uint256 addedValue)',
  'function setApprovalForAll(address operator, bool approved)',
  'function approve(address token, address spender, uint160 amount, uint48 expiration)', // Permit2
  'function transferFrom(address from, address to, uint256 amount)', // ERC-20; ERC-721's (the token id) has the same selector
  'function safeTransferFrom(address from, address to, uint256 tokenId)', // ERC-721
  'function safeTransferFrom(address from, address to, uint256 tokenId, bytes data)', // ERC-721
  'function safeTransferFrom(address from, address to, uint256 id, uint256 amount, bytes data)', // ERC-1155
  'function safeBatchTransferFrom(address from, address to, uint256[] ids, uint256[] amounts, bytes data)', // ERC-1155
]);

/** A transaction's calldata as far as Keel reads it. */
export type DecodedCall =
  | { kind: 'native' }
  | { kind: 'erc20_transfer'; recipient: string; amount: bigint }
  | { kind: 'erc20_approve'; spender: string; amount: bigint }
  | { kind: 'set_approval_for_all'; operator: string; approved: boolean }
  | { kind: 'permit2_approve'; token: string; spender: string; amount: bigint }
  /** transferFrom: `amount` is an ERC-20's amount (an ERC-721's has the same selector: there, the token's id). */
  | { kind: 'transfer_from'; recipient: string; amount: bigint }
  /** An NFT's safeTransferFrom (ERC-721, ERC-1155) or safeBatchTransferFrom (ERC-1155). */
  | { kind: 'nft_transfer'; recipient: string }
  | { kind: 'other' };

/** Decodes the calls that move or grant tokens (ERC-20, ERC-721, ERC-1155, Permit2); anything else is `other` (a plain send is `native`). */
export function decodeCall(data: string): DecodedCall {
  if (data === '0x' || data === '') return { kind: 'native' };
  let parsed: ethers.TransactionDescription | null;
  try {
    parsed = calls.parseTransaction({ data });
  } catch {
    return { kind: 'other' };
  }
  if (!parsed) return { kind: 'other' };
  const a = parsed.args;
  switch (parsed.signature) {
    case 'transfer(address,uint256)':
      return { kind: 'erc20_transfer', recipient: ethers.getAddress(a[0]), amount: a[1] };
    case 'approve(address,uint256)':
    case 'increaseAllowance(address,uint256)':
      return { kind: 'erc20_approve', spender: ethers.getAddress(a[0]), amount: a[1] };
    case 'setApprovalForAll(address,bool)':
      return { kind: 'set_approval_for_all', operator: ethers.getAddress(a[0]), approved: a[1] };
    case 'approve(address,address,uint160,uint48)':
      return { kind: 'permit2_approve', token: ethers.getAddress(a[0]), spender: ethers.getAddress(a[1]), amount: a[2] };
    case 'transferFrom(address,address,uint256)':
      return { kind: 'transfer_from', recipient: ethers.getAddress(a[1]), amount: a[2] };
    case 'safeTransferFrom(address,address,uint256)':
    case 'safeTransferFrom(address,address,uint256,bytes)':
    case 'safeTransferFrom(address,address,uint256,uint256,bytes)':
    case 'safeBatchTransferFrom(address,address,uint256[],uint256[],bytes)':
      return { kind: 'nft_transfer', recipient: ethers.getAddress(a[1]) };
    default:
      return { kind: 'other' };
  }
}

const UNLIMITED = 2n ** 255n;

/**
 * What a transaction grants. An approve (or increaseAllowance) is risky when it is unlimited or
 * larger than what the address holds of the token now (`holdings`, null when unknown: then any
 * non-zero approve counts as above holdings); setApprovalForAll(true) and Permit2's approve always are.
 */
export function transactionRisks(call: DecodedCall, holdings: bigint | null): RiskFinding[] {
  if (call.kind === 'set_approval_for_all') return call.approved ? ['SET_APPROVAL_FOR_ALL'] : [];
  if (call.kind === 'permit2_approve') return call.amount > 0n ? ['PERMIT2'] : [];
  if (call.kind !== 'erc20_approve' || call.amount === 0n) return [];
  if (call.amount >= UNLIMITED) return ['UNLIMITED_APPROVE'];
  if (holdings === null || call.amount > holdings) return ['APPROVE_ABOVE_HOLDINGS'];
  return [];
}

/** The length of a digest (keccak256): what a contract wallet verifies an owner's signature of. */
const DIGEST_BYTES = 32;

/**
 * What a message signature grants: a message of exactly 32 bytes (written as hex, or a text that
 * long in UTF-8) may be the hash of anything, and a contract wallet checks a digest's EIP-191
 * signature as its owner's approval (a Gnosis Safe takes one of its safeTxHash, v + 4, as the owner
 * approving that transaction): DIGEST_SIGNATURE, signed only as a spending grant is.
 */
export function messageRisks(payload: Uint8Array): RiskFinding[] {
  return payload.length === DIGEST_BYTES ? ['DIGEST_SIGNATURE'] : [];
}

/** EIP-712 typed data as the caller sends it (types may include EIP712Domain). */
export interface TypedDataRequest {
  domain: Record<string, unknown>;
  types: Record<string, { name: string; type: string }[]>;
  primaryType: string;
  message: Record<string, unknown>;
}

/** An address as typed data must write it: 0x and 40 hex digits (any case; a mixed case one is checksummed by the encoder). */
const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const ADDRESS_AS_WRITTEN = 'must be an address written as 0x and 40 hex digits';

/**
 * Refuses (422 naming the field) an address of typed data, the domain's verifyingContract or a
 * value of type address in the message, written otherwise than as 0x-hex: ethers reads an ICAP
 * address (XE…) as the address it encodes, and would look up an ENS name when signing, so the
 * screens of what the typed data names (sanctions, Keel's settlement contract, the wallet's lists)
 * would read one address and the signature grant another. `types`: the typed data's types without
 * EIP712Domain, read after the encoder validated the typed data against them.
 */
export function refuseNonHexAddresses(typed: TypedDataRequest, types: TypedDataRequest['types']): void {
  if (typed.domain.verifyingContract != null) refuseNonHexIn(types, 'address', typed.domain.verifyingContract, 'typedData.domain.verifyingContract');
  refuseNonHexIn(types, typed.primaryType, typed.message, 'typedData.message');
}

function refuseNonHexIn(types: TypedDataRequest['types'], type: string, value: unknown, field: string): void {
  const array = /^(.*)\[\d*\]$/.exec(type);
  if (array) {
    if (Array.isArray(value)) value.forEach((v, i) => refuseNonHexIn(types, array[1], v, `${field}.${i}`));
  } else if (type === 'address') {
    if (typeof value !== 'string' || !HEX_ADDRESS.test(value)) throw KeelError.invalidField(field, ADDRESS_AS_WRITTEN);
  } else if (Object.hasOwn(types, type) && value !== null && typeof value === 'object') {
    for (const f of types[type]) refuseNonHexIn(types, f.type, (value as Record<string, unknown>)[f.name], `${field}.${f.name}`);
  }
}

/** EIP-3009's signed transfers: whoever holds the signature moves `value` of the token (the domain's verifyingContract) from `from` to `to`. */
const TRANSFER_AUTHORIZATIONS = new Set(['TransferWithAuthorization', 'ReceiveWithAuthorization']);

/** What typed data moves as a transfer (an EIP-3009 authorization): the token contract, the recipient and the raw amount; null for any other typed data. */
export function typedDataTransfer(typed: TypedDataRequest): { token: string | null; recipient: string; amount: bigint } | null {
  if (!TRANSFER_AUTHORIZATIONS.has(typed.primaryType)) return null;
  const { to, value } = typed.message;
  if (typeof to !== 'string' || !HEX_ADDRESS.test(to)) throw KeelError.invalidField('typedData.message.to', `must be the address ${typed.primaryType} pays, written as 0x and 40 hex digits`);
  let amount: bigint;
  try {
    amount = ethers.getBigInt(value as ethers.BigNumberish);
  } catch {
    throw KeelError.invalidField('typedData.message.value', `must be the whole amount ${typed.primaryType} moves`);
  }
  const token = typeof typed.domain.verifyingContract === 'string' && ethers.isAddress(typed.domain.verifyingContract) ? ethers.getAddress(typed.domain.verifyingContract.toLowerCase()) : null;
  return { token, recipient: ethers.getAddress(to.toLowerCase()), amount };
}

/** The request's fields a refusal of a call names: its target and value, and where its decoded recipient and amount are. */
export interface CallFields {
  to: string;
  value: string;
  recipient: string;
  amount: string;
}

/** A call the wallet's key authorises: its target, its native value and its calldata. */
export interface Call {
  to: string;
  value: bigint;
  data: string;
}

/** A call typed data authorises its signer to have made, and the typed data's fields it was read from. */
export interface TypedDataCall {
  call: Call;
  fields: CallFields;
}

/** Typed data that carries a call: one of these primary types, or any type with a `bytes` field of one of these names. */
const CALL_TYPES = new Set(['ForwardRequest', 'MetaTransaction', 'SafeTx']);
const CALL_BYTES = /^(data|functionSignature|calldata)$/i;

/** The shape of a call Keel reads as the signer's own, from the typed data's types and domain alone. */
function readableCall(typed: TypedDataRequest): 'ForwardRequest' | 'MetaTransaction' | null {
  const types = new Map((typed.types[typed.primaryType] ?? []).map((f) => [f.name, f.type]));
  if (typed.primaryType === 'ForwardRequest' && types.get('to') === 'address' && types.get('data') === 'bytes' && /^uint\d*$/.test(types.get('value') ?? 'uint')) return 'ForwardRequest';
  const contract = typed.domain.verifyingContract;
  if (typed.primaryType === 'MetaTransaction' && types.get('functionSignature') === 'bytes' && typeof contract === 'string' && ethers.isAddress(contract)) return 'MetaTransaction';
  return null;
}

/**
 * The call typed data makes as its signer, where Keel can read it as the signer's own: an ERC-2771
 * ForwardRequest (the forwarder at the domain's verifyingContract calls `to` with `value` and
 * `data` as `from`) or a native meta-transaction (the contract at the domain's verifyingContract
 * runs `functionSignature` as `from`). Null for any other typed data; read after the typed data
 * was validated against its types.
 */
export function typedDataCall(typed: TypedDataRequest): TypedDataCall | null {
  const m = typed.message;
  const address = (v: unknown) => ethers.getAddress(String(v).toLowerCase());
  const bytes = (v: unknown) => ethers.hexlify(v as ethers.BytesLike).toLowerCase();
  switch (readableCall(typed)) {
    case 'ForwardRequest':
      return {
        call: { to: address(m.to), value: m.value == null ? 0n : ethers.getBigInt(m.value as ethers.BigNumberish), data: bytes(m.data) },
        fields: { to: 'typedData.message.to', value: 'typedData.message.value', recipient: 'typedData.message.data', amount: 'typedData.message.data' },
      };
    case 'MetaTransaction': {
      const inner = 'typedData.message.functionSignature';
      return { call: { to: address(typed.domain.verifyingContract), value: 0n, data: bytes(m.functionSignature) }, fields: { to: 'typedData.domain.verifyingContract', value: inner, recipient: inner, amount: inner } };
    }
    default:
      return null;
  }
}

/** Typed data that carries a call Keel cannot read as the signer's own (a Safe transaction, a user operation, a call of an unknown shape). */
function carriesUnreadCall(typed: TypedDataRequest): boolean {
  const carries = CALL_TYPES.has(typed.primaryType) || Object.entries(typed.types).some(([name, fields]) => name !== 'EIP712Domain' && fields.some((f) => /^bytes(\[\d*\])*$/.test(f.type) && CALL_BYTES.test(f.name)));
  return carries && readableCall(typed) === null;
}

/**
 * What a typed data signature grants: a Permit of any family (EIP-2612, DAI, ERC-721's, Permit2's
 * PermitSingle / PermitBatch / PermitTransferFrom / PermitWitnessTransferFrom), anything under a
 * Permit2 domain, an EIP-3009 transfer authorization, a call Keel cannot read as the signer's own
 * (a readable one, typedDataCall, is checked as the transaction it is), or a primary type with a
 * spender or operator field.
 */
export function typedDataRisks(typed: TypedDataRequest): RiskFinding[] {
  const findings = new Set<RiskFinding>();
  if (String(typed.domain.name ?? '') === 'Permit2') findings.add('PERMIT2');
  else if (/^permit/i.test(typed.primaryType)) findings.add('PERMIT');
  else if (TRANSFER_AUTHORIZATIONS.has(typed.primaryType)) findings.add('TRANSFER_AUTHORIZATION');
  if (carriesUnreadCall(typed)) findings.add('CALL_AUTHORIZATION');
  const fields = typed.types[typed.primaryType] ?? [];
  if (!findings.size && fields.some((f) => /^(spender|operator)$/i.test(f.name))) findings.add('SPENDER_FIELD');
  return [...findings];
}

/**
 * Whether a signature with these findings may be made: none, or the request named the risk AND the
 * wallet's security.allowSpendingApprovals is on. Both are needed: a leaked key cannot turn the
 * policy on (that needs the admin scope over configurations) and a policy that allows approvals
 * still signs none the caller did not ask for by name.
 */
export function spendingRefusal(findings: RiskFinding[], acknowledged: string | null | undefined, policyAllows: boolean): SpendingRefusal | null {
  if (!findings.length) return null;
  if (acknowledged !== SPENDING_APPROVAL) return 'RISK_NOT_ACKNOWLEDGED';
  if (!policyAllows) return 'POLICY_FORBIDS_SPENDING_APPROVALS';
  return null;
}

/** Every address among a value's strings (typed data's domain and message), for screening the counterparties. */
export function addressesIn(value: unknown, found: Set<string> = new Set()): Set<string> {
  if (typeof value === 'string' && ethers.isAddress(value) && /^0x/i.test(value)) found.add(ethers.getAddress(value.toLowerCase()));
  else if (Array.isArray(value)) value.forEach((v) => addressesIn(v, found));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => addressesIn(v, found));
  return found;
}
