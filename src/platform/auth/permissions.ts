/** Core-host scopes and order-book permissions, as the spec names them. */
export const CORE_SCOPES = ['read', 'write', 'admin'] as const;
export type CoreScope = (typeof CORE_SCOPES)[number];

export const PRO_PERMISSIONS = [
  'orderbook_order:create',
  'orderbook_order:read',
  'orderbook_order:cancel',
  'orderbook_market:read',
  'orderbook_market:manage',
  'orderbook_settlement:read',
] as const;
export type ProPermission = (typeof PRO_PERMISSIONS)[number];

/** The Trade scope: every order-book permission but market management. */
export const PRO_TRADE_PERMISSIONS: ProPermission[] = PRO_PERMISSIONS.filter((p) => p !== 'orderbook_market:manage');

export type Host = 'core' | 'pro';
export type Environment = 'sandbox' | 'production';
export type Tier = 'Starter' | 'Pro' | 'Business';
export const TIERS: Tier[] = ['Starter', 'Pro', 'Business'];

/**
 * Whether a set of granted scopes satisfies a required one. On the core host `admin` implies
 * everything; `read` and `write` are independent (read = queries / GET, write = mutations).
 * On the pro host permissions are exact.
 */
export function grants(host: Host, granted: ReadonlySet<string>, required: string): boolean {
  if (host === 'core') return granted.has('admin') || granted.has(required);
  return granted.has(required);
}
