/**
 * The one error type of Keel. Every failure a caller can see is a KeelError with one of the
 * spec's codes; the REST shim renders it as the error envelope and GraphQL as extensions.
 */
export const ERROR_STATUS = {
  UNAUTHORIZED: 401,
  INVALID_TOKEN: 401,
  TOKEN_EXPIRED: 401,
  FORBIDDEN: 403,
  VALIDATION_ERROR: 422,
  BAD_REQUEST: 400,
  MISSING_FIELD: 422,
  INVALID_FIELD: 422,
  NOT_FOUND: 404,
  CONFLICT: 409,
  DUPLICATE_ENTRY: 409,
  RATE_LIMIT_EXCEEDED: 429,
  QUOTA_EXCEEDED: 429,
  INSUFFICIENT_FUNDS: 400,
  PAYMENT_FAILED: 400,
  PAYMENT_EXPIRED: 400,
  INVALID_NETWORK: 400,
  WALLET_NOT_FOUND: 404,
  INVALID_ADDRESS: 400,
  MONITORING_FAILED: 400,
  // Keel's own: a transfer or sweep to an address on a sanctions list is refused.
  SANCTIONED_ADDRESS: 403,
  // Keel's own: a signature that would grant spending power (a Permit, an unlimited approve) without the request's acknowledgement and the wallet's allowSpendingApprovals.
  SPENDING_APPROVAL_REFUSED: 403,
  // Not in the spec's table, which names no code for these statuses.
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
  // Order-book codes (the spec leaves them to us; an unknown market is NOT_FOUND).
  NOT_LEADER: 409,
  MARKET_HALTED: 409,
  // The wallet asked to exit the chain's settlement contract (its escape hatch): it places no more orders there.
  TRADING_EXIT_REQUESTED: 409,
  ORDER_NOT_CANCELLABLE: 409,
  BELOW_MIN_NOTIONAL: 422,
  POST_ONLY_WOULD_TAKE: 409,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldError {
  field: string;
  error: string;
}

export class KeelError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: Record<string, unknown>;
  /** A transient refusal: the HTTP answer carries `Retry-After: <seconds>` (NOT_LEADER, every 429, an Idempotency-Key still in progress). */
  retryAfterSeconds?: number;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, status?: number) {
    const resolved = status ?? ERROR_STATUS[code];
    // A refusal of the caller's request (4xx) is never logged with a stack, and capturing one, its
    // async frames included, cost more CPU than the rest of an authenticated 404 (request-cost).
    const stackTraceLimit = Error.stackTraceLimit;
    if (resolved < 500) Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'KeelError';
    this.code = code;
    this.status = resolved;
    this.details = details;
  }

  static notFound(what: string): KeelError {
    return new KeelError('NOT_FOUND', `${what} not found`);
  }

  static validation(fields: FieldError[], message?: string): KeelError {
    if (fields.length === 1) {
      const [f] = fields;
      const code: ErrorCode = /required|missing/i.test(f.error) ? 'MISSING_FIELD' : 'INVALID_FIELD';
      return new KeelError(code, message ?? `${f.field}: ${f.error}`, { fields });
    }
    return new KeelError('VALIDATION_ERROR', message ?? 'Validation failed', { fields });
  }

  static invalidField(field: string, error: string): KeelError {
    return new KeelError('INVALID_FIELD', `${field}: ${error}`, { fields: [{ field, error }] });
  }

  /** 409 NOT_LEADER: this node does not lead the market's shard; `leader` is the node that does, if known. Transient: retry after `retryAfterSeconds`. */
  static notLeader(market: string, shard: number, leader: string | null, retryAfterSeconds: number): KeelError {
    const error = new KeelError('NOT_LEADER', `This node does not lead shard ${shard} of market ${market}; retry in ${retryAfterSeconds} s${leader ? ` or send it to ${leader}` : ''}`, { leader, shard, market, retryAfterSeconds });
    error.retryAfterSeconds = retryAfterSeconds;
    return error;
  }

  static forbidden(message = 'Insufficient permission'): KeelError {
    return new KeelError('FORBIDDEN', message);
  }

  static unauthorized(message = 'Missing or invalid credentials'): KeelError {
    return new KeelError('UNAUTHORIZED', message);
  }
}

export function isKeelError(e: unknown): e is KeelError {
  return e instanceof KeelError;
}
