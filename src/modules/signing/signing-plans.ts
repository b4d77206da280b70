import { ethers } from 'ethers';
import { KeelError } from '../../platform/errors';
import { Ids } from '../../platform/ids';
import type { ChainNetwork, ChainNetworks, AssetView, ChainService } from '../chains';
import { readBalances } from '../../platform/chain-port/evm-chain';
import type { SendingWallet } from '../wallets';
import { checksummedAddress, checkSanctions, checkTransferPolicy, RecipientScreen } from '../withdrawals';
import { nodeRefused, shortReason } from '../../platform/chain-port/evm-transactions';
import type { QueuedLine, SettlementContractGuard, SettlementContracts } from '../withdrawals';
import type { RiskFinding } from './signing.domain';
import { addressesIn, Call, CallFields, decodeCall, DecodedCall, messageRisks, refuseNonHexAddresses, SPENDING_APPROVAL, spendingRefusal, transactionRisks, TypedDataRequest, typedDataCall, typedDataRisks, typedDataTransfer } from './signing-checks';
import type { SigningKind, SignMessage, SignTransaction, SignTypedData } from './signing.domain';

const MAX_MESSAGE_CHARS = 65_536;
const MAX_CALLDATA_HEX = 262_144;
const WEI = /^(0|[1-9][0-9]{0,77})$/;
/** A signed, unsent transaction may offer at most this many times the node's current max fee per gas: a higher fee (tip above all) would pay the wallet away to whoever mines it. */
const FEE_BOUND_MULTIPLE = 3n;
const HEX = /^0x([0-9a-fA-F]{2})*$/;

/**
 * A signing request validated and assessed against the wallet: what it asks (as recorded), what it
 * grants, whether it is refused (the refusal is recorded and answered, not thrown here), and how to
 * make the signature. Built again when a held request is approved, so the approval is checked
 * against the lists and the policy of that moment.
 */
export interface SigningPlan {
  kind: SigningKind;
  request: Record<string, unknown>;
  blockchainId: string | null;
  broadcast: boolean;
  risks: RiskFinding[];
  acknowledgedRisk: typeof SPENDING_APPROVAL | null;
  refusal: KeelError | null;
  /** A broadcast transaction: the transfer line the transaction sender signs and sends. */
  line: QueuedLine | null;
  /** Makes the signature with the wallet's key (a signed raw transaction for a transaction). */
  sign(signer: ethers.Wallet): Promise<{ signature: string; txHash: string | null }>;
}

/** What a plan is built with: the modules it reads, and the screen of counterparties. */
export interface PlanDeps {
  chains: ChainService;
  networks: ChainNetworks;
  screen: RecipientScreen;
  /** Keel's settlement contracts (the settlement module's): no request calls one or signs for one. */
  settlementContracts: SettlementContracts;
  /** Refuses Keel's settlement contract as the recipient of a token, as every send path does (a token transferred to it is lost). */
  settlementContractGuard: SettlementContractGuard;
  /** The chain balance must cover a broadcast transaction's amount (and what is in flight) and its gas. */
  ensureFunds(wallet: SendingWallet, network: ChainNetwork, lines: QueuedLine[]): Promise<void>;
}

/** A message (EIP-191): one that may be a digest (messageRisks) is signed only as a spending grant is. */
export async function planMessage(wallet: SendingWallet, input: SignMessage): Promise<SigningPlan> {
  if (typeof input.message !== 'string' || input.message.length > MAX_MESSAGE_CHARS) throw KeelError.invalidField('message', `must be a string of at most ${MAX_MESSAGE_CHARS} characters`);
  const hex = input.encoding === 'HEX';
  if (hex && !HEX.test(input.message)) throw KeelError.invalidField('message', 'must be 0x-prefixed hex bytes with encoding HEX');
  const payload = hex ? ethers.getBytes(input.message) : ethers.toUtf8Bytes(input.message);
  const risks = messageRisks(payload);
  return {
    kind: 'MESSAGE',
    request: { message: input.message, encoding: hex ? 'HEX' : 'UTF8', ...(input.acknowledgeRisk ? { acknowledgeRisk: input.acknowledgeRisk } : {}) },
    blockchainId: null,
    broadcast: false,
    risks,
    acknowledgedRisk: input.acknowledgeRisk ?? null,
    refusal: await firstRefusal(() => refuseSpending(risks, input.acknowledgeRisk, wallet)),
    line: null,
    sign: async (signer) => ({ signature: await signer.signMessage(payload), txHash: null }),
  };
}

export async function planTypedData(deps: PlanDeps, wallet: SendingWallet, input: SignTypedData): Promise<SigningPlan> {
  const typed = typedDataOf(input.typedData);
  const { EIP712Domain: domainType, ...types } = typed.types;
  let primaryType: string;
  let derivedDomainType: { name: string; type: string }[];
  try {
    primaryType = ethers.TypedDataEncoder.from(types).primaryType;
    derivedDomainType = ethers.TypedDataEncoder.getPayload(typed.domain, types, typed.message).types.EIP712Domain;
  } catch (e) {
    throw KeelError.invalidField('typedData', `is not valid EIP-712 typed data: ${shortReason(e)}`);
  }
  // The domain is hashed with the fields it has, in EIP-712's order: a given EIP712Domain type that
  // says otherwise would be signed as something other than the caller's wallet software would sign.
  if (domainType && JSON.stringify(domainType.map((f) => [f.name, f.type])) !== JSON.stringify(derivedDomainType.map((f) => [f.name, f.type]))) {
    throw KeelError.invalidField('typedData.types.EIP712Domain', `must list the domain's fields in EIP-712 order: ${derivedDomainType.map((f) => `${f.type} ${f.name}`).join(', ')}`);
  }
  if (primaryType !== typed.primaryType) throw KeelError.invalidField('typedData.primaryType', `must be the root of types (${primaryType})`);
  refuseNonHexAddresses(typed, types);
  const chains = typedDataChains(deps, wallet, typed.domain);
  const transfer = typedDataTransfer(typed);
  // A call the typed data makes as the signer is checked as that transaction would be, on each chain it may be for.
  const carried = typedDataCall(typed);
  const calls = carried ? await Promise.all(chains.map((n) => assessCall(deps, n, wallet, carried.call, carried.fields))) : [];
  const callRefusals = carried ? calls.flatMap((c) => callChecks(deps, wallet, c, carried.fields)) : [];
  for (const [i, n] of chains.entries()) {
    if (transfer) await refusePaymentToSettlement(deps, n.blockchainId, transfer.recipient, 'typedData.message.to');
    if (carried) await refusePaymentToSettlement(deps, n.blockchainId, paidTo(calls[i].decoded), carried.fields.recipient);
  }
  // With none of the wallet's chains at hand to check it on, a carried call is one Keel cannot read.
  const unread: RiskFinding[] = carried && !calls.length ? ['CALL_AUTHORIZATION'] : [];
  const risks = [...new Set([...typedDataRisks(typed), ...calls.flatMap((c) => c.risks), ...unread])];
  const counterparties = [...addressesIn([typed.domain.verifyingContract, typed.message])].filter((a) => a !== wallet.address);
  const refusal = await firstRefusal(
    () => refuseSettlementDomain(deps, chains, typed.domain.verifyingContract),
    () => screen(deps.screen, counterparties, 'typedData'),
    async () => {
      if (transfer) await checkTypedDataTransfer(deps, wallet, chains, transfer);
    },
    ...callRefusals,
    () => refuseSpending(risks, input.acknowledgeRisk, wallet),
  );
  return {
    kind: 'TYPED_DATA',
    request: { typedData: input.typedData, ...(input.acknowledgeRisk ? { acknowledgeRisk: input.acknowledgeRisk } : {}) },
    blockchainId: null,
    broadcast: false,
    risks,
    acknowledgedRisk: input.acknowledgeRisk ?? null,
    refusal,
    line: null,
    sign: async (signer) => ({ signature: await signer.signTypedData(typed.domain, types, typed.message), txHash: null }),
  };
}

/** The wallet's chains typed data is for: the one its domain.chainId names (422 when that is none of the wallet's chains), or every one when it names none. */
function typedDataChains(deps: PlanDeps, wallet: SendingWallet, domain: Record<string, unknown>): ChainNetwork[] {
  const chains = wallet.blockchainIds.map((id) => deps.networks.get(id)).filter((n): n is ChainNetwork => n !== undefined);
  if (domain.chainId == null) return chains;
  const chainId = ethers.getBigInt(domain.chainId as ethers.BigNumberish); // valid: the encoder read it
  const named = chains.filter((n) => BigInt(n.spec.chainId) === chainId);
  if (!named.length) throw KeelError.invalidField('typedData.domain.chainId', `must be the chain id of one of the wallet's chains (${chains.map((n) => n.spec.chainId).join(', ')})`);
  return named;
}

/**
 * Typed data that moves tokens (an EIP-3009 authorization) under the wallet's allowedRecipients and
 * maxTransferAmount, as a transfer of the token at the domain's verifyingContract. A token Keel does
 * not know on those chains cannot be checked: under either setting it is refused.
 */
async function checkTypedDataTransfer(deps: PlanDeps, wallet: SendingWallet, chains: ChainNetwork[], transfer: { token: string | null; recipient: string; amount: bigint }): Promise<void> {
  const { security } = wallet.configurations;
  if (!security.allowedRecipients.length && !security.maxTransferAmount) return;
  const assets = await Promise.all(chains.map(async (n) => deps.chains.withChains(await deps.chains.assetsOf(n.blockchainId))));
  const token = assets.flat().find((a) => !a.isNative && transfer.token !== null && a.address.toLowerCase() === transfer.token.toLowerCase());
  if (!token) {
    throw new KeelError('FORBIDDEN', "The typed data moves a token Keel does not know on the wallet's chains, so the wallet's security.allowedRecipients and maxTransferAmount cannot be applied to it", {
      fields: [{ field: 'typedData.domain.verifyingContract', error: 'INVALID_FIELD' }],
    });
  }
  checkTransferPolicy(security, [{ asset: token, recipient: transfer.recipient, rawAmount: transfer.amount }], (_i, part) => (part === 'recipient' ? 'typedData.message.to' : 'typedData.message.value'));
}

/**
 * A transaction: what it moves or grants (assessCall) under the wallet's allowedRecipients and
 * maxTransferAmount, every counterparty screened, spending grants under the acknowledgement rule; a
 * broadcast one funded and booked as one transfer line; one signed now gets the chain's nonce, gas
 * limit and fees where the request leaves them out, its fees bounded by the chain's and counted
 * toward maxTransferAmount.
 */
export async function planTransaction(deps: PlanDeps, wallet: SendingWallet, input: SignTransaction, opts: { forApproval: boolean }): Promise<SigningPlan> {
  const { network, tx } = transactionOf(deps, wallet, input);
  const call = await assessCall(deps, network, wallet, tx, TRANSACTION_FIELDS);
  await refusePaymentToSettlement(deps, network.blockchainId, paidTo(call.decoded), TRANSACTION_FIELDS.recipient);
  // One transfer line books one asset: a broadcast call that moves or grants a token cannot book native value too (an ERC-20's transfer and approve take none).
  if (tx.broadcast && call.line.asset.id !== call.native.id && tx.value > 0n) {
    throw KeelError.invalidField('value', `must be 0 for a broadcast ${call.decoded.kind === 'erc20_transfer' ? 'transfer' : 'approve'} of ${call.line.asset.symbol}: its transfer line books the token`);
  }
  const refusal = await firstRefusal(
    ...callChecks(deps, wallet, call, TRANSACTION_FIELDS),
    () => refuseSpending(call.risks, input.acknowledgeRisk, wallet),
    async () => {
      if (tx.broadcast && !opts.forApproval) await deps.ensureFunds(wallet, network, [call.line]);
    },
  );
  const request = { ...input, blockchainId: network.blockchainId, to: tx.to, value: tx.value.toString(), data: tx.data };
  const base = { kind: 'TRANSACTION' as const, request, blockchainId: network.blockchainId, broadcast: tx.broadcast, risks: call.risks, acknowledgedRisk: input.acknowledgeRisk ?? null };
  if (refusal || tx.broadcast) return { ...base, refusal, line: tx.broadcast ? call.line : null, sign: () => Promise.reject(new Error('a broadcast transaction is signed by the transaction sender')) };
  const filled = await fill(network, wallet.address, tx, input);
  if ('refusal' in filled) return { ...base, refusal: filled.refusal, line: null, sign: () => Promise.reject(filled.refusal) };
  // The most the transaction may pay in fees is native spent as surely as its value: it counts toward
  // maxTransferAmount (the fee has no recipient; the lines' recipients passed above).
  const withFee = [...call.lines, { asset: call.native, recipient: tx.to, rawAmount: filled.fee, fields: { recipient: 'to', amount: 'maxFeePerGas' } }];
  const feeRefusal = await firstRefusal(() => checkTransferPolicy({ ...wallet.configurations.security, allowedRecipients: [] }, withFee, (i, part) => withFee[i].fields[part]));
  if (feeRefusal) return { ...base, refusal: feeRefusal, line: null, sign: () => Promise.reject(feeRefusal) };
  return {
    ...base,
    refusal: null,
    line: null,
    sign: async (signer) => {
      const signed = ethers.Transaction.from(await signer.signTransaction(filled.request));
      return { signature: signed.serialized, txHash: signed.hash };
    },
  };
}

const TRANSACTION_FIELDS: CallFields = { to: 'to', value: 'value', recipient: 'recipient', amount: 'amount' };

/** A line the wallet's allowedRecipients and maxTransferAmount apply to, with the fields a refusal of it names. */
interface NamedLine {
  asset: AssetView;
  recipient: string;
  rawAmount: bigint;
  fields: { recipient: string; amount: string };
}

/** What a call moves or grants, read against the tokens Keel knows on its chain. */
interface CallAssessment {
  to: string;
  /** The call's `to` is a settlement contract of Keel's on the chain (SettlementContracts). */
  toSettlement: boolean;
  decoded: DecodedCall;
  native: AssetView;
  /** The token Keel knows that the call transfers or approves; null for any other call. */
  token: AssetView | null;
  /** What the policy applies to. */
  lines: NamedLine[];
  risks: RiskFinding[];
  /** The transfer line that books it, were it sent: what leaves the custody ledger, to whom, and the call. */
  line: QueuedLine;
}

/**
 * A transfer, transferFrom, approve or increaseAllowance whose `to` is a token Keel knows on the
 * chain (a fungible one: NFT collections are not among them), or a Permit2 approve of one, moves or
 * grants that token: its decoded recipient or spender and amount are the line, and the token
 * contract is not a recipient. Any other call, a token's calldata sent to an address that is no
 * token Keel knows among them and an NFT's transfer, pays its native value to its `to`, which is
 * the line (the contract must be an allowed recipient); the address such calldata names (recipient,
 * spender, operator) is held to allowedRecipients as well, moving nothing Keel can count. Native
 * value sent with a token's call, or to Permit2, is a line of its own to the `to`.
 */
async function assessCall(deps: PlanDeps, network: ChainNetwork, wallet: SendingWallet, call: Call, fields: CallFields): Promise<CallAssessment> {
  const assets = await deps.chains.withChains(await deps.chains.assetsOf(network.blockchainId));
  const toSettlement = await deps.settlementContracts.isSettlementContract(network.blockchainId, call.to);
  const native = assets.find((a) => a.isNative)!;
  const decoded = decodeCall(call.data);
  const tokenAt = (address: string) => assets.find((a) => !a.isNative && a.address.toLowerCase() === address.toLowerCase()) ?? null;
  const token = decoded.kind === 'permit2_approve' ? tokenAt(decoded.token) : 'amount' in decoded ? tokenAt(call.to) : null;
  const named = partyOf(decoded);
  const paid: NamedLine = { asset: native, recipient: call.to, rawAmount: call.value, fields: decoded.kind === 'native' ? { recipient: fields.recipient, amount: fields.amount } : { recipient: fields.to, amount: fields.value } };
  const booksValue: QueuedLine = { asset: native, recipient: call.to, rawAmount: call.value, call };
  let lines: NamedLine[];
  let line: QueuedLine;
  if (token && named && 'amount' in decoded) {
    const moved: NamedLine = { asset: token, recipient: named, rawAmount: decoded.amount, fields: { recipient: fields.recipient, amount: fields.amount } };
    lines = call.value === 0n && call.to.toLowerCase() === token.address.toLowerCase() ? [moved] : [moved, paid];
    // A transferFrom moves what its `from` holds (the wallet's, or another's by its allowance): it books its native value only, as any other call.
    line = decoded.kind === 'transfer_from' ? booksValue : { asset: token, recipient: named, rawAmount: decoded.kind === 'erc20_transfer' ? decoded.amount : 0n, call };
  } else {
    lines = named ? [paid, { asset: native, recipient: named, rawAmount: 0n, fields: { recipient: fields.recipient, amount: fields.amount } }] : [paid];
    line = booksValue;
  }
  const holdings = decoded.kind === 'erc20_approve' && token ? (await readBalances(network.provider, wallet.address, [token]))[0] : null;
  return { to: call.to, toSettlement, decoded, native, token, lines, risks: transactionRisks(decoded, holdings), line };
}

/** The address a decoded call pays or empowers: the recipient of a transfer (transfer, transferFrom, an NFT's), the spender of an approve, the operator of setApprovalForAll. */
function partyOf(call: DecodedCall): string | null {
  switch (call.kind) {
    case 'erc20_transfer':
    case 'transfer_from':
    case 'nft_transfer':
      return call.recipient;
    case 'erc20_approve':
    case 'permit2_approve':
      return call.spender;
    case 'set_approval_for_all':
      return call.operator;
    default:
      return null;
  }
}

/** The address a decoded call pays a token to: the recipient of a transfer, a transferFrom or an NFT's transfer (an approve pays no one). */
function paidTo(call: DecodedCall): string | null {
  return call.kind === 'erc20_transfer' || call.kind === 'transfer_from' || call.kind === 'nft_transfer' ? call.recipient : null;
}

/**
 * A token paid to Keel's settlement contract is lost: the contract credits a trading balance only
 * through a deposit to trading. Refused as on every send path (SettlementContractGuard: 422
 * VALIDATION_ERROR naming `field`, not recorded: the request is not valid), whatever the token.
 */
async function refusePaymentToSettlement(deps: PlanDeps, blockchainId: string, recipient: string | null, field: string): Promise<void> {
  if (recipient) await deps.settlementContractGuard.check(blockchainId, recipient, field);
}

/**
 * The checks of a call, in order: not a call of Keel's settlement contract; its counterparties
 * screened; its lines under the wallet's allowedRecipients and maxTransferAmount; under a
 * maxTransferAmount, no call that moves or grants a token Keel does not know (it cannot be capped).
 */
function callChecks(deps: PlanDeps, wallet: SendingWallet, call: CallAssessment, fields: CallFields): (() => void)[] {
  const { security } = wallet.configurations;
  const parties = [{ recipient: call.to, field: fields.to }, ...call.lines.map((l) => ({ recipient: l.recipient, field: l.fields.recipient }))];
  return [
    () => {
      if (call.toSettlement) throw settlementRefusal(fields.to, call.to);
    },
    () => checkSanctions(deps.screen, parties, (i) => parties[i].field),
    () => checkTransferPolicy(security, call.lines, (i, part) => call.lines[i].fields[part]),
    () => {
      if (!call.token && call.decoded.kind !== 'native' && call.decoded.kind !== 'other' && security.maxTransferAmount) {
        throw new KeelError('FORBIDDEN', "The call moves or grants a token Keel does not know, so the wallet's security.maxTransferAmount cannot be applied to it", { fields: [{ field: fields.to, error: 'INVALID_FIELD' }] });
      }
    },
  ];
}

interface Tx {
  to: string;
  value: bigint;
  data: string;
  broadcast: boolean;
}

function transactionOf(deps: PlanDeps, wallet: SendingWallet, input: SignTransaction): { network: ChainNetwork; tx: Tx } {
  if (!Ids.isUuid(input.blockchainId ?? '')) throw KeelError.invalidField('blockchainId', 'must be the id of one of the wallet\'s chains');
  const network = deps.networks.get(input.blockchainId.toLowerCase());
  if (!network || !wallet.blockchainIds.includes(network.blockchainId)) throw new KeelError('INVALID_NETWORK', 'The wallet is not enabled on this chain');
  const to = checksummedAddress(input.to, 'to');
  if (input.value != null && !WEI.test(input.value)) throw KeelError.invalidField('value', 'must be a whole number of wei, e.g. "1000000000000000000"');
  const data = input.data ?? '0x';
  if (!HEX.test(data) || data.length > MAX_CALLDATA_HEX) throw KeelError.invalidField('data', `must be 0x-prefixed hex bytes, at most ${MAX_CALLDATA_HEX} characters`);
  const broadcast = input.broadcast === true;
  if (broadcast) {
    const given = (['nonce', 'gasLimit', 'maxFeePerGas', 'maxPriorityFeePerGas'] as const).find((f) => input[f] != null);
    if (given) throw KeelError.invalidField(given, 'is chosen by Keel for a broadcast transaction; leave it out');
  }
  for (const f of ['gasLimit', 'maxFeePerGas', 'maxPriorityFeePerGas'] as const) {
    const v = input[f];
    if (v != null && !WEI.test(v)) throw KeelError.invalidField(f, 'must be a whole number');
  }
  if (input.nonce != null && (!Number.isSafeInteger(input.nonce) || input.nonce < 0)) throw KeelError.invalidField('nonce', 'must be a non-negative integer');
  return { network, tx: { to, value: BigInt(input.value ?? '0'), data: data.toLowerCase(), broadcast } };
}

/**
 * The transaction as it is signed, and the most it may pay in fees (gasLimit × maxFeePerGas). A
 * given maxFeePerGas is bounded by FEE_BOUND_MULTIPLE times the node's current one, and a given tip
 * by the max fee (422 naming the field); a filled tip never exceeds a given max fee.
 */
async function fill(network: ChainNetwork, from: string, tx: Tx, input: SignTransaction): Promise<{ request: ethers.TransactionRequest; fee: bigint } | { refusal: KeelError }> {
  const call = { from, to: tx.to, value: tx.value, data: tx.data };
  let gasLimit: bigint;
  try {
    gasLimit = input.gasLimit ? BigInt(input.gasLimit) : ((await network.provider.estimateGas(call)) * 12n) / 10n;
  } catch (e) {
    if (!nodeRefused(e)) throw new KeelError('UPSTREAM_ERROR', `${network.spec.name}'s node did not answer the gas estimate; try again shortly`);
    return { refusal: new KeelError('BAD_REQUEST', `The chain refuses the transaction: ${shortReason(e)}`) };
  }
  const market = await network.provider.getFeeData().catch(() => Promise.reject(new KeelError('UPSTREAM_ERROR', `${network.spec.name}'s node did not answer the fee estimate; try again shortly`)));
  const bound = FEE_BOUND_MULTIPLE * market.maxFeePerGas!;
  const maxFeePerGas = input.maxFeePerGas ? BigInt(input.maxFeePerGas) : market.maxFeePerGas!;
  if (maxFeePerGas > bound) throw KeelError.invalidField('maxFeePerGas', `must be at most ${FEE_BOUND_MULTIPLE} times the chain's current max fee per gas (${bound} wei now)`);
  const maxPriorityFeePerGas = input.maxPriorityFeePerGas ? BigInt(input.maxPriorityFeePerGas) : market.maxPriorityFeePerGas! < maxFeePerGas ? market.maxPriorityFeePerGas! : maxFeePerGas;
  if (maxPriorityFeePerGas > maxFeePerGas) throw KeelError.invalidField('maxPriorityFeePerGas', `must be at most maxFeePerGas (${maxFeePerGas} wei)`);
  return {
    request: {
      type: 2,
      chainId: network.spec.chainId,
      nonce: input.nonce ?? (await network.provider.getTransactionCount(from, 'pending')),
      gasLimit,
      maxFeePerGas,
      maxPriorityFeePerGas,
      to: tx.to,
      value: tx.value,
      data: tx.data,
    },
    fee: gasLimit * maxFeePerGas,
  };
}

function typedDataOf(value: Record<string, unknown>): TypedDataRequest {
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(value)) throw KeelError.invalidField('typedData', 'must be an object {domain, types, primaryType, message}');
  for (const f of ['domain', 'types', 'message'] as const) if (!isObject(value[f])) throw KeelError.invalidField(`typedData.${f}`, 'must be an object');
  if (typeof value.primaryType !== 'string' || !value.primaryType) throw KeelError.invalidField('typedData.primaryType', 'must be a type name');
  const types = value.types as Record<string, unknown>;
  for (const [name, fields] of Object.entries(types)) {
    if (!Array.isArray(fields) || fields.some((f) => !isObject(f) || typeof f.name !== 'string' || typeof f.type !== 'string')) throw KeelError.invalidField(`typedData.types.${name}`, 'must be a list of {name, type}');
  }
  return value as unknown as TypedDataRequest;
}

/**
 * Typed data under the domain of Keel's settlement contract, on one of the chains it may be for, is
 * an authorisation that contract honours (a `Withdrawal` of the wallet's trading balance): Keel
 * signs those itself, for the withdrawals from trading it has taken from the ledger.
 */
async function refuseSettlementDomain(deps: PlanDeps, chains: ChainNetwork[], verifyingContract: unknown): Promise<void> {
  if (typeof verifyingContract !== 'string' || !ethers.isAddress(verifyingContract)) return;
  for (const n of chains) {
    if (await deps.settlementContracts.isSettlementContract(n.blockchainId, verifyingContract)) {
      throw settlementRefusal('typedData.domain.verifyingContract', ethers.getAddress(verifyingContract));
    }
  }
}

/**
 * 403 FORBIDDEN naming `field`: a wallet's key does not call Keel's settlement contract, nor sign
 * for it, through the signing API (SettlementContracts says why); the message says what to use.
 */
function settlementRefusal(field: string, contract: string): KeelError {
  return new KeelError(
    'FORBIDDEN',
    `${field} is Keel's settlement contract (${contract}), which holds the wallets' trading balances: the wallet's key does not call it or sign for it here, as that would move them past Keel's trading ledger. ` +
      'Use the trading deposit and withdrawal API (POST /v1/orderbook/wallets/{walletId}/trading/deposits and /trading/withdrawals; depositToTrading and withdrawFromTrading), or `keel settlement exit` to leave the contract',
    { fields: [{ field, error: 'INVALID_FIELD' }], settlementContract: contract },
  );
}

/** 403 SANCTIONED_ADDRESS for the first counterparty on a sanctions list (the withdrawals' screen), naming `field`. */
function screen(sanctions: RecipientScreen, addresses: string[], field: string): void {
  checkSanctions(sanctions, addresses.map((recipient) => ({ recipient })), () => field);
}

function refuseSpending(risks: RiskFinding[], acknowledged: string | null | undefined, wallet: SendingWallet): void {
  const refusal = spendingRefusal(risks, acknowledged, wallet.configurations.security.allowSpendingApprovals);
  if (!refusal) return;
  const message =
    refusal === 'RISK_NOT_ACKNOWLEDGED'
      ? `This signature grants spending power over the wallet's tokens (${risks.join(', ')}); name the risk with acknowledgeRisk: "${SPENDING_APPROVAL}" to sign it`
      : `This signature grants spending power over the wallet's tokens (${risks.join(', ')}) and the wallet's security.allowSpendingApprovals is off`;
  throw new KeelError('SPENDING_APPROVAL_REFUSED', message, { reason: refusal, risk: SPENDING_APPROVAL, findings: risks });
}

/** The first of these checks to refuse, as its KeelError; anything else propagates. */
async function firstRefusal(...checks: (() => void | Promise<void>)[]): Promise<KeelError | null> {
  for (const check of checks) {
    try {
      await check();
    } catch (e) {
      if (e instanceof KeelError) return e;
      throw e;
    }
  }
  return null;
}
