import { evaluatePolicy, PolicyInput, PolicyRules } from '../../../src/modules/agents/policy-engine';

const CHAIN = '11111111-1111-4111-8111-111111111111';
const OTHER_CHAIN = '22222222-2222-4222-8222-222222222222';
const USDC = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const DAI = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
const alice = '0x1111111111111111111111111111111111111111';
const mallory = '0x2222222222222222222222222222222222222222';
const carol = '0x3333333333333333333333333333333333333333';

/** A policy that allows USDC on CHAIN to alice, with no limits. */
const rules = (over: Partial<PolicyRules> = {}): PolicyRules => ({
  allowedBlockchainIds: [CHAIN],
  allowedAssetIds: [USDC],
  allowAnyRecipient: false,
  allowedRecipients: [alice],
  deniedRecipients: [],
  assetLimits: [],
  maxPerPaymentUsd: null,
  maxPerWindowUsd: null,
  approvalAboveUsd: null,
  windowSeconds: 86_400,
  ...over,
});

/** 10 USDC (6 decimals) to alice, worth 10 USD, nothing spent yet, not sanctioned. */
const input = (policyRules: PolicyRules | null, over: { payment?: Partial<PolicyInput['payment']>; window?: Partial<PolicyInput['window']>; screening?: PolicyInput['screening']; agentActive?: boolean; sourceHeldByAml?: boolean } = {}): PolicyInput => ({
  policy: policyRules ? { id: 'policy-1', version: 3, rules: policyRules } : null,
  agentActive: over.agentActive ?? true,
  payment: { blockchainId: CHAIN, assetId: USDC, decimals: 6, symbol: 'USDC', recipient: alice, rawAmount: 10_000_000n, amountUsd: '10', ...over.payment },
  window: { assetRaw: 0n, usd: '0', withoutUsd: 0, ...over.window },
  screening: over.screening ?? { sanctioned: false, matches: [] },
  sourceHeldByAml: over.sourceHeldByAml ?? false,
});

const outcome = (evaluation: ReturnType<typeof evaluatePolicy>, rule: string) => evaluation.rules.find((r) => r.rule === rule)?.outcome;

describe('agent payment policy engine', () => {
  test('default deny: an agent without a policy may pay nothing', () => {
    const e = evaluatePolicy(input(null));
    expect(e).toMatchObject({ decision: 'DENY', policyId: null, policyVersion: null });
    expect(e.rules).toEqual([expect.objectContaining({ rule: 'policy_exists', outcome: 'FAIL' })]);
    expect(e.denialReason).toMatch(/no policy/);
  });

  test('default deny: a policy with nothing listed allows no chain, asset or recipient', () => {
    const e = evaluatePolicy(input(rules({ allowedBlockchainIds: [], allowedAssetIds: [], allowedRecipients: [] })));
    expect(e.decision).toBe('DENY');
    expect(outcome(e, 'blockchain_allowed')).toBe('FAIL');
    expect(outcome(e, 'asset_allowed')).toBe('FAIL');
    expect(outcome(e, 'recipient_allowed')).toBe('FAIL');
    // The first failing rule is the reason.
    expect(e.denialReason).toMatch(/blockchain .* is not in allowedBlockchainIds/);
  });

  test('allows a payment every rule passes, and records every rule and its outcome', () => {
    const e = evaluatePolicy(input(rules()));
    expect(e).toMatchObject({ decision: 'ALLOW', policyId: 'policy-1', policyVersion: 3, denialReason: null });
    expect(e.rules.map((r) => r.rule)).toEqual([
      'policy_exists',
      'agent_active',
      'blockchain_allowed',
      'asset_allowed',
      'recipient_not_denied',
      'recipient_allowed',
      'recipient_not_sanctioned',
      'source_not_aml_held',
      'per_payment_asset_limit',
      'window_asset_limit',
      'usd_value_known',
      'per_payment_usd_limit',
      'window_usd_limit',
      'approval_threshold',
    ]);
    expect(e.rules.every((r) => r.outcome === 'PASS' || r.outcome === 'SKIPPED')).toBe(true);
    expect(e.rules.every((r) => r.detail.length > 0)).toBe(true);
  });

  test('a suspended agent is denied', () => {
    const e = evaluatePolicy(input(rules(), { agentActive: false }));
    expect(e.decision).toBe('DENY');
    expect(outcome(e, 'agent_active')).toBe('FAIL');
  });

  test('chain and asset allow lists', () => {
    expect(outcome(evaluatePolicy(input(rules(), { payment: { blockchainId: OTHER_CHAIN } })), 'blockchain_allowed')).toBe('FAIL');
    const dai = evaluatePolicy(input(rules(), { payment: { assetId: DAI, decimals: 18, symbol: 'DAI', rawAmount: 10n ** 18n } }));
    expect(dai).toMatchObject({ decision: 'DENY' });
    expect(dai.denialReason).toMatch(/DAI .* is not in allowedAssetIds/);
    // Ids compare regardless of case.
    expect(evaluatePolicy(input(rules({ allowedAssetIds: [USDC.toUpperCase()], allowedBlockchainIds: [CHAIN.toUpperCase()] }))).decision).toBe('ALLOW');
  });

  test('recipient allow list, any-recipient, and the deny list that wins over both', () => {
    expect(evaluatePolicy(input(rules(), { payment: { recipient: carol } })).denialReason).toMatch(/not in allowedRecipients/);
    expect(evaluatePolicy(input(rules({ allowAnyRecipient: true }), { payment: { recipient: carol } })).decision).toBe('ALLOW');
    // Checksummed or not, the same address.
    const checksummed = '0xAbCdEf0123456789AbCdEf0123456789aBcDeF01';
    expect(evaluatePolicy(input(rules({ allowedRecipients: [checksummed.toLowerCase()] }), { payment: { recipient: checksummed } })).decision).toBe('ALLOW');
    const denied = evaluatePolicy(input(rules({ allowAnyRecipient: true, allowedRecipients: [mallory], deniedRecipients: [mallory] }), { payment: { recipient: mallory } }));
    expect(denied.decision).toBe('DENY');
    expect(outcome(denied, 'recipient_not_denied')).toBe('FAIL');
    expect(outcome(denied, 'recipient_allowed')).toBe('PASS');
  });

  test('a sanctioned recipient is denied, naming the lists that matched, even when the policy allows it', () => {
    const e = evaluatePolicy(input(rules({ allowAnyRecipient: true }), { screening: { sanctioned: true, matches: [{ list: 'ETH', address: alice }] } }));
    expect(e.decision).toBe('DENY');
    expect(outcome(e, 'recipient_not_sanctioned')).toBe('FAIL');
    expect(e.denialReason).toBe(`recipient ${alice} is on a sanctions list (ETH)`);
  });

  test('a payment from an address holding an unreleased deposit from a sanctioned address waits for an administrator, whom it does not bypass the other rules for', () => {
    const held = evaluatePolicy(input(rules({ allowAnyRecipient: true }), { sourceHeldByAml: true }));
    expect(held.decision).toBe('REQUIRE_APPROVAL');
    expect(outcome(held, 'source_not_aml_held')).toBe('HOLD');
    expect(held.rules.find((r) => r.rule === 'source_not_aml_held')?.detail).toMatch(/sanctioned address not released yet: an administrator must approve/);
    const approved = evaluatePolicy({ ...input(rules({ allowAnyRecipient: true }), { sourceHeldByAml: true }), approved: true });
    expect(approved.decision).toBe('ALLOW');
    expect(outcome(approved, 'source_not_aml_held')).toBe('PASS');
    // Held or not, a failing rule still denies.
    expect(evaluatePolicy(input(rules(), { sourceHeldByAml: true, payment: { recipient: carol } })).decision).toBe('DENY');
  });

  test('per-payment limit in asset units, inclusive, in the asset decimals', () => {
    const limited = rules({ assetLimits: [{ assetId: USDC, maxPerPayment: '10', maxPerWindow: null, approvalAbove: null }] });
    expect(evaluatePolicy(input(limited)).decision).toBe('ALLOW');
    const over = evaluatePolicy(input(limited, { payment: { rawAmount: 10_000_001n } }));
    expect(over.decision).toBe('DENY');
    expect(over.denialReason).toBe('10.000001 USDC exceeds the per-payment limit of 10 USDC');
    // A limit for another asset does not apply.
    expect(outcome(evaluatePolicy(input(rules({ assetLimits: [{ assetId: DAI, maxPerPayment: '1', maxPerWindow: null, approvalAbove: null }] }))), 'per_payment_asset_limit')).toBe('SKIPPED');
  });

  test('rolling-window limit in asset units counts what was already spent', () => {
    const limited = rules({ assetLimits: [{ assetId: USDC, maxPerPayment: null, maxPerWindow: '25', approvalAbove: null }] });
    expect(evaluatePolicy(input(limited, { window: { assetRaw: 15_000_000n } })).decision).toBe('ALLOW');
    const over = evaluatePolicy(input(limited, { window: { assetRaw: 15_000_001n } }));
    expect(over.decision).toBe('DENY');
    expect(outcome(over, 'window_asset_limit')).toBe('FAIL');
    expect(over.denialReason).toMatch(/25.000001 USDC over the last 86400s/);
  });

  test('per-payment and rolling-window limits in USD', () => {
    const perPayment = rules({ maxPerPaymentUsd: '9.99' });
    expect(evaluatePolicy(input(perPayment)).denialReason).toBe('10 USD exceeds the per-payment limit of 9.99 USD');
    expect(evaluatePolicy(input(perPayment, { payment: { amountUsd: '9.99' } })).decision).toBe('ALLOW');
    const perWindow = rules({ maxPerWindowUsd: '100' });
    expect(evaluatePolicy(input(perWindow, { window: { usd: '90' } })).decision).toBe('ALLOW');
    const over = evaluatePolicy(input(perWindow, { window: { usd: '90.5' } }));
    expect(over.decision).toBe('DENY');
    expect(outcome(over, 'window_usd_limit')).toBe('FAIL');
  });

  test('a USD rule without a price denies rather than guesses; without USD rules the price does not matter', () => {
    const e = evaluatePolicy(input(rules({ maxPerPaymentUsd: '1000' }), { payment: { amountUsd: null } }));
    expect(e.decision).toBe('DENY');
    expect(outcome(e, 'usd_value_known')).toBe('FAIL');
    expect(e.denialReason).toMatch(/no USD price for USDC/);
    expect(evaluatePolicy(input(rules(), { payment: { amountUsd: null } })).decision).toBe('ALLOW');
    // The prices module's reason (no trustworthy price) is the denial's reason.
    const untrusted = evaluatePolicy(
      input(rules({ approvalAboveUsd: '5' }), { payment: { amountUsd: null, usdPrice: { priceUsd: null, source: 'none', unavailableReason: 'no trustworthy USD price for USDC: self-trades never set a price' } } }),
    );
    expect([untrusted.decision, untrusted.denialReason]).toEqual(['DENY', "no trustworthy USD price for USDC: self-trades never set a price: the policy's USD rules cannot be checked, so the payment is denied"]);
    const priced = evaluatePolicy(input(rules({ maxPerPaymentUsd: '1000' }), { payment: { usdPrice: { priceUsd: '1', source: 'par' } } }));
    expect(priced.rules.find((r) => r.rule === 'usd_value_known')?.detail).toBe('10 USDC is worth 10 USD at 1 USD per USDC (par)');
    // Earlier payments without a USD value make the window's USD total unknown: denied.
    expect(outcome(evaluatePolicy(input(rules({ maxPerWindowUsd: '1000' }), { window: { withoutUsd: 1 } })), 'window_usd_limit')).toBe('FAIL');
  });

  test('above an approval threshold (asset units or USD) the payment waits for an administrator', () => {
    const byAsset = evaluatePolicy(input(rules({ assetLimits: [{ assetId: USDC, maxPerPayment: null, maxPerWindow: null, approvalAbove: '9' }] })));
    expect(byAsset.decision).toBe('REQUIRE_APPROVAL');
    expect(outcome(byAsset, 'approval_threshold')).toBe('HOLD');
    expect(byAsset.denialReason).toBeNull();
    const byUsd = evaluatePolicy(input(rules({ approvalAboveUsd: '5' })));
    expect(byUsd.decision).toBe('REQUIRE_APPROVAL');
    // At the threshold is not above it.
    expect(evaluatePolicy(input(rules({ approvalAboveUsd: '10' }))).decision).toBe('ALLOW');
  });

  test("an administrator's approval meets the approval thresholds, and nothing else", () => {
    const threshold = rules({ assetLimits: [{ assetId: USDC, maxPerPayment: '20', maxPerWindow: '15', approvalAbove: '9' }], approvalAboveUsd: '5' });
    const approved = evaluatePolicy({ ...input(threshold), approved: true });
    expect(approved).toMatchObject({ decision: 'ALLOW', denialReason: null });
    expect(approved.rules.find((r) => r.rule === 'approval_threshold')?.detail).toBe('the payment is above the approval threshold of 9 USDC and 5 USD, and an administrator approved it');
    // Every other rule still applies: here the window, with what was let go since the payment was held.
    const over = evaluatePolicy({ ...input(threshold, { window: { assetRaw: 6_000_000n } }), approved: true });
    expect([over.decision, outcome(over, 'window_asset_limit'), over.denialReason]).toEqual(['DENY', 'FAIL', '16 USDC over the last 86400s with this payment exceeds the limit of 15 USDC']);
  });

  test('a denial wins over a hold: nothing is put to an administrator that the policy refuses', () => {
    const e = evaluatePolicy(input(rules({ approvalAboveUsd: '1', maxPerPaymentUsd: '5' })));
    expect(e.decision).toBe('DENY');
    expect(outcome(e, 'approval_threshold')).toBe('HOLD');
  });
});
