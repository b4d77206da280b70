/**
 * The agent payment policy engine: pure and synchronous. It is given everything it decides on (the
 * policy, the payment, what the agent has already spent in the window, the payment's USD value and
 * the recipient's screening) and returns every rule with its outcome. It reads nothing and writes
 * nothing; the agent payment service gathers its inputs and stores its answer.
 *
 * Default deny: without a policy nothing is allowed, and a policy allows only the chains and assets
 * it lists, and only the recipients it lists unless it says any recipient may be paid.
 */
import { formatScaled, parseDecimal, toUnitsFloor } from '../../platform/decimal';

/** Limits in one asset's units, decimal strings of whole units ("250.5"); absent: no such limit. */
export interface AssetLimit {
  assetId: string;
  maxPerPayment: string | null;
  maxPerWindow: string | null;
  /** Payments above this amount wait for an administrator's approval. */
  approvalAbove: string | null;
}

export interface PolicyRules {
  allowedBlockchainIds: string[];
  allowedAssetIds: string[];
  /** When false, only allowedRecipients may be paid. */
  allowAnyRecipient: boolean;
  allowedRecipients: string[];
  /** Never paid, whatever else the policy says. */
  deniedRecipients: string[];
  assetLimits: AssetLimit[];
  maxPerPaymentUsd: string | null;
  maxPerWindowUsd: string | null;
  /** Payments worth more than this in USD wait for an administrator's approval. */
  approvalAboveUsd: string | null;
  /** The rolling window the per-window limits count over, in seconds. */
  windowSeconds: number;
}

export interface PolicyInput {
  policy: { id: string; version: number; rules: PolicyRules } | null;
  agentActive: boolean;
  payment: {
    blockchainId: string;
    assetId: string;
    /** The asset's decimals: amounts are compared in its smallest unit. */
    decimals: number;
    symbol: string;
    recipient: string;
    rawAmount: bigint;
    /** USD value of the payment, a decimal string; null when no trustworthy price could be had. */
    amountUsd: string | null;
    /** The policy price it was valued at (prices module), or why there is none. */
    usdPrice?: { priceUsd: string | null; source: string; unavailableReason?: string };
  };
  /** What already counts against the window: the payments let go in it and, for a new request, those held (AgentPaymentService.windowTotals). */
  window: {
    /** Of this asset, in its smallest unit. */
    assetRaw: bigint;
    /** In USD, decimal string, over every asset. */
    usd: string;
    /** How many of those payments have no USD value (their USD total is not known). */
    withoutUsd: number;
  };
  screening: { sanctioned: boolean; matches: { list: string; address: string }[] };
  /** Whether the agent wallet's address holds a deposit from a sanctioned address no administrator has released. */
  sourceHeldByAml: boolean;
  /** An administrator approves the payment: that is what the approval thresholds ask for, so they are met (every other rule still applies). */
  approved?: boolean;
}

export type RuleOutcome = 'PASS' | 'FAIL' | 'HOLD' | 'SKIPPED';
export type Decision = 'ALLOW' | 'DENY' | 'REQUIRE_APPROVAL';

export interface RuleResult {
  rule: string;
  outcome: RuleOutcome;
  detail: string;
}

export interface PolicyEvaluation {
  decision: Decision;
  policyId: string | null;
  policyVersion: number | null;
  rules: RuleResult[];
  /** The first failing rule's detail, when denied. */
  denialReason: string | null;
}

/** USD is compared at this many decimals (far below a cent). */
const USD_DECIMALS = 18;

/** A non-negative decimal string at `decimals` places, digits beyond dropped; null when not a decimal. */
function decimalUnits(text: string, decimals: number): bigint | null {
  return parseDecimal(text) ? toUnitsFloor(text, decimals) : null;
}

const lower = (xs: string[]) => new Set(xs.map((x) => x.toLowerCase()));

/** A policy's lists as lower-cased sets, built once per rules object (a policy may list thousands of addresses). */
interface Lookups {
  chains: Set<string>;
  assets: Set<string>;
  allowed: Set<string>;
  denied: Set<string>;
}
const lookupsOf = new WeakMap<PolicyRules, Lookups>();
function lookups(r: PolicyRules): Lookups {
  let l = lookupsOf.get(r);
  if (!l) lookupsOf.set(r, (l = { chains: lower(r.allowedBlockchainIds), assets: lower(r.allowedAssetIds), allowed: lower(r.allowedRecipients), denied: lower(r.deniedRecipients) }));
  return l;
}

export function evaluatePolicy(input: PolicyInput): PolicyEvaluation {
  const { policy, payment, window } = input;
  const rules: RuleResult[] = [];
  const add = (rule: string, outcome: RuleOutcome, detail: string) => rules.push({ rule, outcome, detail });

  if (!policy) {
    add('policy_exists', 'FAIL', 'The agent has no policy: agents may pay nothing until an administrator sets one (default deny)');
    return finish(rules, null);
  }
  add('policy_exists', 'PASS', `policy version ${policy.version}`);
  const r = policy.rules;
  const sets = lookups(r);

  add('agent_active', input.agentActive ? 'PASS' : 'FAIL', input.agentActive ? 'the agent is active' : 'the agent is suspended');

  const chainAllowed = sets.chains.has(payment.blockchainId.toLowerCase());
  add('blockchain_allowed', chainAllowed ? 'PASS' : 'FAIL', `blockchain ${payment.blockchainId} is ${chainAllowed ? '' : 'not '}in allowedBlockchainIds`);

  const assetAllowed = sets.assets.has(payment.assetId.toLowerCase());
  add('asset_allowed', assetAllowed ? 'PASS' : 'FAIL', assetAllowed ? `${payment.symbol} (${payment.assetId}) is in allowedAssetIds` : `${payment.symbol} (${payment.assetId}) is not in allowedAssetIds`);

  const recipient = payment.recipient.toLowerCase();
  const denied = sets.denied.has(recipient);
  add('recipient_not_denied', denied ? 'FAIL' : 'PASS', denied ? `recipient ${payment.recipient} is in deniedRecipients` : `recipient ${payment.recipient} is not in deniedRecipients`);

  if (r.allowAnyRecipient) add('recipient_allowed', 'PASS', 'the policy allows any recipient');
  else {
    const listed = sets.allowed.has(recipient);
    add('recipient_allowed', listed ? 'PASS' : 'FAIL', listed ? `recipient ${payment.recipient} is in allowedRecipients` : `recipient ${payment.recipient} is not in allowedRecipients`);
  }

  const s = input.screening;
  add(
    'recipient_not_sanctioned',
    s.sanctioned ? 'FAIL' : 'PASS',
    s.sanctioned ? `recipient ${payment.recipient} is on a sanctions list (${s.matches.map((m) => m.list).join(', ')})` : `recipient ${payment.recipient} is on no sanctions list`,
  );

  // Nothing leaves a held address unless a person decides (as auto-sweeps and settlement rules are held).
  if (!input.sourceHeldByAml) add('source_not_aml_held', 'PASS', "the agent wallet's address holds no unreleased deposit from a sanctioned address");
  else if (input.approved) add('source_not_aml_held', 'PASS', "the agent wallet's address holds a deposit from a sanctioned address not released yet, and an administrator approved the payment");
  else add('source_not_aml_held', 'HOLD', "the agent wallet's address holds a deposit from a sanctioned address not released yet: an administrator must approve the payment (or release the deposit)");

  // Limits in the asset's own units.
  const limit = r.assetLimits.find((l) => l.assetId.toLowerCase() === payment.assetId.toLowerCase());
  const units = (text: string) => decimalUnits(text, payment.decimals) ?? 0n;
  const amount = formatScaled(payment.rawAmount, payment.decimals);
  if (limit?.maxPerPayment) {
    const ok = payment.rawAmount <= units(limit.maxPerPayment);
    add('per_payment_asset_limit', ok ? 'PASS' : 'FAIL', `${amount} ${payment.symbol} ${ok ? 'is within' : 'exceeds'} the per-payment limit of ${limit.maxPerPayment} ${payment.symbol}`);
  } else add('per_payment_asset_limit', 'SKIPPED', `no per-payment limit for ${payment.symbol}`);
  if (limit?.maxPerWindow) {
    const total = window.assetRaw + payment.rawAmount;
    const ok = total <= units(limit.maxPerWindow);
    add('window_asset_limit', ok ? 'PASS' : 'FAIL', `${formatScaled(total, payment.decimals)} ${payment.symbol} over the last ${r.windowSeconds}s with this payment ${ok ? 'is within' : 'exceeds'} the limit of ${limit.maxPerWindow} ${payment.symbol}`);
  } else add('window_asset_limit', 'SKIPPED', `no per-window limit for ${payment.symbol}`);

  // Limits in USD: a USD rule with no trustworthy price for the payment is a denial (fail closed), never a guess.
  const usdRules = Boolean(r.maxPerPaymentUsd || r.maxPerWindowUsd || r.approvalAboveUsd);
  const usd = payment.amountUsd === null ? null : decimalUnits(payment.amountUsd, USD_DECIMALS);
  const price = payment.usdPrice;
  if (!usdRules) add('usd_value_known', 'SKIPPED', 'the policy has no USD rule');
  else if (usd === null) add('usd_value_known', 'FAIL', `${price?.unavailableReason ?? `no USD price for ${payment.symbol}`}: the policy's USD rules cannot be checked, so the payment is denied`);
  else add('usd_value_known', 'PASS', `${amount} ${payment.symbol} is worth ${payment.amountUsd} USD${price?.priceUsd ? ` at ${price.priceUsd} USD per ${payment.symbol} (${price.source})` : ''}`);
  if (r.maxPerPaymentUsd && usd !== null) {
    const ok = usd <= decimalUnits(r.maxPerPaymentUsd, USD_DECIMALS)!;
    add('per_payment_usd_limit', ok ? 'PASS' : 'FAIL', `${payment.amountUsd} USD ${ok ? 'is within' : 'exceeds'} the per-payment limit of ${r.maxPerPaymentUsd} USD`);
  } else add('per_payment_usd_limit', 'SKIPPED', r.maxPerPaymentUsd ? 'no USD value' : 'no per-payment USD limit');
  if (r.maxPerWindowUsd && usd !== null) {
    if (window.withoutUsd > 0) {
      add('window_usd_limit', 'FAIL', `${window.withoutUsd} payment(s) in the last ${r.windowSeconds}s have no USD value, so the window's USD total is unknown`);
    } else {
      const total = decimalUnits(window.usd, USD_DECIMALS)! + usd;
      const ok = total <= decimalUnits(r.maxPerWindowUsd, USD_DECIMALS)!;
      add('window_usd_limit', ok ? 'PASS' : 'FAIL', `${formatScaled(total, USD_DECIMALS)} USD over the last ${r.windowSeconds}s with this payment ${ok ? 'is within' : 'exceeds'} the limit of ${r.maxPerWindowUsd} USD`);
    }
  } else add('window_usd_limit', 'SKIPPED', r.maxPerWindowUsd ? 'no USD value' : 'no per-window USD limit');

  // The approval thresholds: above either, a human decides.
  const aboveAsset = limit?.approvalAbove ? payment.rawAmount > units(limit.approvalAbove) : false;
  const aboveUsd = r.approvalAboveUsd && usd !== null ? usd > decimalUnits(r.approvalAboveUsd, USD_DECIMALS)! : false;
  if (!limit?.approvalAbove && !r.approvalAboveUsd) add('approval_threshold', 'SKIPPED', 'no approval threshold');
  else if (aboveAsset || aboveUsd) {
    const which = [aboveAsset ? `${limit!.approvalAbove} ${payment.symbol}` : null, aboveUsd ? `${r.approvalAboveUsd} USD` : null].filter(Boolean).join(' and ');
    if (input.approved) add('approval_threshold', 'PASS', `the payment is above the approval threshold of ${which}, and an administrator approved it`);
    else add('approval_threshold', 'HOLD', `the payment is above the approval threshold of ${which}: an administrator must approve it`);
  } else add('approval_threshold', 'PASS', 'the payment is within the approval thresholds');

  return finish(rules, policy);
}

function finish(rules: RuleResult[], policy: PolicyInput['policy']): PolicyEvaluation {
  const failed = rules.find((r) => r.outcome === 'FAIL');
  const decision: Decision = failed ? 'DENY' : rules.some((r) => r.outcome === 'HOLD') ? 'REQUIRE_APPROVAL' : 'ALLOW';
  return { decision, policyId: policy?.id ?? null, policyVersion: policy?.version ?? null, rules, denialReason: failed ? failed.detail : null };
}
