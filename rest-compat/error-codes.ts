import type { Host } from '../src/platform/auth/permissions';
import { ERROR_STATUS, type ErrorCode } from '../src/platform/errors';

export interface ErrorCodeDoc {
  /** The hosts that send it (a code no host sends has no place in ERROR_STATUS). */
  hosts: readonly Host[];
  /** What it means to the caller, as the OpenAPI documents say it beside the code. */
  means: string;
  /**
   * Sent only by some operations: those whose route row names it (`RouteRow.errors`), or a path
   * documented by hand (the public checkout's, whose answers are the host's shared responses, where
   * every code the host sends is described). The other operations' answers leave it out.
   */
  routeOnly?: true;
}

const both: readonly Host[] = ['core', 'pro'];
const core: readonly Host[] = ['core'];
const pro: readonly Host[] = ['pro'];

/**
 * Every code of ERROR_STATUS, written down once for the OpenAPI documents: a response's description
 * is the codes of its status the host (and the operation) sends, each with its meaning. A code added
 * to ERROR_STATUS does not compile until it is described here.
 */
export const ERROR_CODE_DOCS: Record<ErrorCode, ErrorCodeDoc> = {
  UNAUTHORIZED: { hosts: both, means: 'Missing or invalid credentials' },
  INVALID_TOKEN: { hosts: both, means: 'A bearer token that is malformed, forged, of another host or environment, or of a revoked key' },
  TOKEN_EXPIRED: { hosts: both, means: 'A bearer token past its expiry' },
  FORBIDDEN: { hosts: both, means: 'The key lacks the scope or permission named in the message' },
  VALIDATION_ERROR: { hosts: both, means: 'Validation failed, details.fields [{field, error}] naming every field at fault: the Idempotency-Key header too, when it was used for another request' },
  BAD_REQUEST: { hosts: both, means: 'Malformed request or JSON' },
  MISSING_FIELD: { hosts: both, means: 'One required field is missing, named in details.fields' },
  INVALID_FIELD: { hosts: both, means: 'One field is invalid, named in details.fields; also an unknown, repeated or array-form (`x[]`) query parameter' },
  NOT_FOUND: { hosts: both, means: 'Not found, or not visible to this organisation' },
  CONFLICT: {
    hosts: both,
    means:
      "The resource's state forbids the change (not transient: do not retry); or, with details.reason IDEMPOTENCY_KEY_IN_PROGRESS and Retry-After, a request with the same Idempotency-Key is still being processed: transient, send the same request with the same key again after Retry-After (its work may already be done: never retry it under a new key)",
  },
  DUPLICATE_ENTRY: { hosts: both, means: 'The resource already exists (a name, slug, symbol or clientOrderId already used); not transient, do not retry' },
  RATE_LIMIT_EXCEEDED: { hosts: both, means: "Rate limit exceeded, details {limit, remaining, resetAt}: the key's window, see the X-RateLimit headers; Retry-After gives the seconds until the window resets" },
  QUOTA_EXCEEDED: { hosts: both, means: "The organisation's monthly request quota is spent, details {limit, used, resetAt}: see the X-Quota headers and GET /v1/organization/usage; Retry-After gives the seconds until the month's reset" },
  INSUFFICIENT_FUNDS: { hosts: both, means: 'The balance cannot pay the amount, with its fees or gas' },
  PAYMENT_FAILED: { hosts: core, means: 'The public checkout takes no payment: the payment link is inactive, has taken all its payments or takes none on that chain, or the payment request is too long for a QR code', routeOnly: true },
  PAYMENT_EXPIRED: { hosts: core, means: 'The payment link has expired (public checkout)', routeOnly: true },
  INVALID_NETWORK: { hosts: both, means: 'The chain does not support the request: unknown or inactive, of another family, or without what the operation needs' },
  WALLET_NOT_FOUND: { hosts: both, means: "A master wallet named by the path or the body does not exist or is not this organisation's" },
  INVALID_ADDRESS: { hosts: both, means: "Not a valid address of the chain's family (format or checksum), naming the field" },
  MONITORING_FAILED: { hosts: core, means: 'Monitoring cannot be turned on: the wallet is not on that chain, or the chain is not active', routeOnly: true },
  SANCTIONED_ADDRESS: { hosts: both, means: 'Money sent to an address on a sanctions list, details.matches' },
  SPENDING_APPROVAL_REFUSED: { hosts: core, means: 'A signature that grants spending power (or authorises a call Keel cannot read, or signs a 32-byte message that may be a digest) without acknowledgeRisk and security.allowSpendingApprovals, details.reason and details.findings' },
  INTERNAL_ERROR: { hosts: both, means: 'An internal error; quote the requestId when contacting support' },
  UPSTREAM_ERROR: { hosts: both, means: "A chain's node or another upstream service did not answer or failed; try again shortly" },
  SERVICE_UNAVAILABLE: { hosts: both, means: 'PostgreSQL or Redis briefly unavailable, or this node shutting down (Retry-After); retry shortly, a write with the same Idempotency-Key' },
  NOT_LEADER: {
    hosts: pro,
    means: "Transient: this node does not lead the market's shard; retry after the Retry-After header's seconds (about one lease, 5 s), at the node details.leader names, with the same clientOrderId",
    routeOnly: true,
  },
  MARKET_HALTED: { hosts: pro, means: 'The market is halted: it takes no new orders (cancels still work)', routeOnly: true },
  TRADING_EXIT_REQUESTED: { hosts: pro, means: "The wallet asked to exit the chain's settlement contract: it places no more orders and makes no more deposits to trading there", routeOnly: true },
  ORDER_NOT_CANCELLABLE: { hosts: pro, means: 'The order is no longer open (filled or cancelled)', routeOnly: true },
  BELOW_MIN_NOTIONAL: { hosts: pro, means: "price × quantity is below the market's minNotional, details.fields naming quantity", routeOnly: true },
  POST_ONLY_WOULD_TAKE: { hosts: pro, means: 'A postOnly order would take liquidity', routeOnly: true },
};

/**
 * The codes `host` answers with `status`, in ERROR_STATUS's order; for an operation (`named`: the
 * codes its route row names), without the route-only codes it does not name.
 */
export function codesOf(host: Host, status: number, named?: readonly ErrorCode[]): ErrorCode[] {
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => {
    const doc = ERROR_CODE_DOCS[code];
    return ERROR_STATUS[code] === status && doc.hosts.includes(host) && (named === undefined || !doc.routeOnly || named.includes(code));
  });
}

/** The statuses `host` answers with codes of ERROR_STATUS. */
export function statusesOf(host: Host): number[] {
  return [...new Set(Object.values(ERROR_STATUS))].filter((status) => codesOf(host, status).length > 0);
}

/** Each code with its meaning: "meaning (CODE); meaning (CODE)". */
export function describeCodes(codes: readonly ErrorCode[]): string {
  return codes.map((code) => `${ERROR_CODE_DOCS[code].means} (${code})`).join('; ');
}
