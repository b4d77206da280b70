/**
 * The spec's event names, the wildcards and the upper-case identifiers, and one matcher that
 * decides whether a subscription's eventTypes cover an event. Webhooks and the live GraphQL feed
 * both use it.
 */
const ACTIONS = ['swap_executed', 'swap_failed', 'transfer_executed', 'transfer_failed', 'signed_success', 'signed_failed'];
const RULE_ACTIONS = ['created', 'updated', 'deleted', 'executed', 'failed'];
const PAYMENT_INTENT_ACTIONS = ['created', 'requires_payment', 'processing', 'succeeded', 'underpaid', 'overpaid', 'expired', 'cancelled'];

export const EVENT_NAMES: readonly string[] = [
  ...['incoming_transfer', 'incoming_transfer_reverted', 'created', 'updated', ...ACTIONS].map((a) => `address.${a}`),
  ...['incoming_transfer', 'incoming_transfer_reverted', 'created', 'updated', ...ACTIONS].map((a) => `master.${a}`),
  ...['created', 'updated', 'deleted'].map((a) => `payment_link.${a}`),
  ...['created', 'updated'].map((a) => `payment_link_transfer.${a}`),
  // Keel's payment intents: one event per status transition (docs/payments-and-checkout.md, payment intents).
  ...PAYMENT_INTENT_ACTIONS.map((a) => `payment_intent.${a}`),
  ...RULE_ACTIONS.map((a) => `address_settlement_rule.${a}`),
  ...RULE_ACTIONS.map((a) => `master_settlement_rule.${a}`),
  // Keel's own: a reorg left a wallet owing what it had already spent or locked, and its repayment.
  'wallet.debt_recorded',
  'wallet.debt_repaid',
  // Keel's own: an incoming transfer from a sanctioned address, flagged and held from auto-sweep, and an admin's release of it.
  'address.incoming_transfer_flagged',
  'master.incoming_transfer_flagged',
  'address.incoming_transfer_flag_released',
  'master.incoming_transfer_flag_released',
  // Keel's own: agents, their wallets and policies, and each transition of an agent payment.
  ...['created', 'updated', 'suspended', 'resumed', 'deleted', 'wallet_created', 'policy_updated'].map((a) => `agent.${a}`),
  ...['pending_approval', 'policy_denied', 'approved', 'submitted', 'executed', 'failed'].map((a) => `agent_payment.${a}`),
  // Keel's own: a settlement batch holding the organisation's trades changed status.
  ...['batched', 'submitted', 'confirmed', 'failed', 'reorged', 'replaced'].map((a) => `settlement_batch.${a}`),
  // Keel's own: a deposit to or withdrawal from a wallet's trading balance in the settlement contract
  // (reorged: a confirmed deposit that a reorg deeper than the confirmation count took off the chain).
  ...['requested', 'pending_approval', 'approved', 'rejected', 'submitted', 'confirmed', 'failed', 'reorged'].map((a) => `trading_transfer.${a}`),
  // Keel's own: reconciliation found a wallet's trading balance in the ledger different from the contract's.
  'trading_balance.difference',
];

export const EVENT_WILDCARDS: readonly string[] = ['address.*', 'master.*', 'payment_link.*', 'payment_link_transfer.*', 'payment_intent.*', 'agent.*', 'agent_payment.*', '*'];

/** Spelled exactly as the spec spells them (DEPOSITE_…, TRANFER_…); each covers the address and master forms. */
export const UPPER_CASE_EVENT_TYPES: Readonly<Record<string, readonly string[]>> = {
  DEPOSITE_INCOMING_DETECTED: ['address.incoming_transfer', 'master.incoming_transfer'],
  DEPOSITE_ADDRESS_CREATED: ['address.created'],
  SWAP_EXECUTED: ['address.swap_executed', 'master.swap_executed'],
  SWAP_FAILED: ['address.swap_failed', 'master.swap_failed'],
  TRANSFER_EXECUTED: ['address.transfer_executed', 'master.transfer_executed'],
  TRANFER_FAILED: ['address.transfer_failed', 'master.transfer_failed'],
  SIGNED_SUCCESS: ['address.signed_success', 'master.signed_success'],
  SIGNED_FAILED: ['address.signed_failed', 'master.signed_failed'],
};

/**
 * The events whose data carries a signature (for a transaction, the signed raw transaction, perhaps
 * never sent): a usable credential, which only admin credentials may read or send anywhere.
 */
export const SIGNING_EVENT_NAMES: readonly string[] = ['address', 'master'].flatMap((w) => [`${w}.signed_success`, `${w}.signed_failed`]);

const KNOWN = new Set<string>([...EVENT_NAMES, ...EVENT_WILDCARDS, ...Object.keys(UPPER_CASE_EVENT_TYPES)]);

/** The values among `types` that are not event names, wildcards or upper-case identifiers. */
export function unknownEventTypes(types: readonly string[]): string[] {
  return types.filter((t) => !KNOWN.has(t));
}

/** Whether a subscription to `types` receives an event named `eventName`. */
export function eventTypesCover(types: readonly string[], eventName: string): boolean {
  for (const t of types) {
    if (t === '*' || t === eventName) return true;
    if (t.endsWith('.*') && eventName.startsWith(t.slice(0, -1))) return true;
    if (UPPER_CASE_EVENT_TYPES[t]?.includes(eventName)) return true;
  }
  return false;
}

/** Whether a subscription to `types` receives signing events (SIGNED_SUCCESS, master.*, * …). */
export function coversSigningEvents(types: readonly string[]): boolean {
  return SIGNING_EVENT_NAMES.some((name) => eventTypesCover(types, name));
}
