/** Core-host scopes and order-book permissions, as the spec names them. */
export const CORE_SCOPES = ['read', 'write', 'admin'] as const;
export type CoreScope = (typeof CORE_SCOPES)[number];

/**
 * An agent's key holds this one scope and nothing else: it may request payments (`agent`) and read
 * its own agent, wallets, policy and payments (`agent:read`), which services confine to that agent.
 * No other key is granted `agent` (admin included: payments are the agent's own requests), and it
 * is not one of CORE_SCOPES, so no key created through the API can hold it.
 */
export const AGENT_SCOPE = 'agent';
/** Reading an agent's things: granted to read and admin keys, and to the agent's own key. */
export const AGENT_READ = 'agent:read';

/**
 * Creating, rotating and revoking API keys (an agent's included; suspending or deleting an agent,
 * which only revokes its key, needs `admin` alone): granted by `admin`, and to the key itself only. An access token never holds it (TokenPrincipal), so a token taken from a page can
 * neither mint itself a lasting key nor lock the owner out. Not a scope a key can be given.
 */
export const KEY_ADMIN = 'admin:api_keys';

export const PRO_PERMISSIONS = [
  'orderbook_order:create',
  'orderbook_order:read',
  'orderbook_order:cancel',
  'orderbook_market:read',
  'orderbook_market:manage',
  'orderbook_settlement:read',
  'orderbook_funds:move',
  'orderbook_funds:approve',
] as const;
export type ProPermission = (typeof PRO_PERMISSIONS)[number];

/**
 * Permissions only the operator's organisation may hold: markets are shared by every
 * organisation, so managing them is the deployment's business, not a tenant's.
 */
export const OPERATOR_PERMISSIONS: readonly ProPermission[] = ['orderbook_market:manage'];

/**
 * Approving a withdrawal from trading held by the wallet's requireApprovalForTransfers: given to
 * an approver's key on purpose, never with the Trade scope (the key that asks is not the one that approves).
 */
export const APPROVER_PERMISSIONS: readonly ProPermission[] = ['orderbook_funds:approve'];

/** The Trade scope: every order-book permission but market management and approvals. */
export const PRO_TRADE_PERMISSIONS: ProPermission[] = PRO_PERMISSIONS.filter((p) => !OPERATOR_PERMISSIONS.includes(p) && !APPROVER_PERMISSIONS.includes(p));

/** What a key of the operator's organisation is issued with: reading and managing markets. */
export const OPERATOR_KEY_PERMISSIONS: ProPermission[] = ['orderbook_market:read', ...OPERATOR_PERMISSIONS];

/** The operator permissions among `scopes`: what a tenant key may never be granted. */
export function operatorOnly(scopes: readonly string[]): string[] {
  return scopes.filter((s) => (OPERATOR_PERMISSIONS as readonly string[]).includes(s));
}

export type Host = 'core' | 'pro';
export type Environment = 'sandbox' | 'production';
export type Tier = 'Starter' | 'Pro' | 'Business';
export const TIERS: Tier[] = ['Starter', 'Pro', 'Business'];

/**
 * Whether a set of granted scopes satisfies a required one. On the core host `admin` implies
 * everything; `read` and `write` are independent (read = queries / GET, write = mutations).
 * On the pro host permissions are exact, and an operator permission counts only for the operator's
 * own keys, whatever a stored key claims.
 */
export function grants(host: Host, granted: ReadonlySet<string>, required: string, operator: boolean): boolean {
  if (host === 'core') {
    if (required === AGENT_SCOPE) return granted.has(AGENT_SCOPE);
    if (required === AGENT_READ) return granted.has(AGENT_SCOPE) || granted.has('read') || granted.has('admin');
    return granted.has('admin') || granted.has(required);
  }
  if (!operator && operatorOnly([required]).length) return false;
  return granted.has(required);
}
