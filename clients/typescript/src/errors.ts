import type { components } from './generated/core';

/** The error envelope both hosts answer with (`{error: {code, message, details?, timestamp, requestId}}`). */
export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];

/** The codes the interface specification and Keel's OpenAPI documents name; others may appear. */
export type KeelErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHORIZED'
  | 'INVALID_TOKEN'
  | 'TOKEN_EXPIRED'
  | 'FORBIDDEN'
  | 'SANCTIONED_ADDRESS'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'DUPLICATE_ENTRY'
  | 'NOT_LEADER'
  | 'POST_ONLY_WOULD_TAKE'
  | 'MARKET_HALTED'
  | 'ORDER_NOT_CANCELLABLE'
  | 'VALIDATION_ERROR'
  | 'MISSING_FIELD'
  | 'INVALID_FIELD'
  | 'RATE_LIMIT_EXCEEDED'
  | 'QUOTA_EXCEEDED'
  | 'INSUFFICIENT_FUNDS'
  | 'PAYMENT_FAILED'
  | 'PAYMENT_EXPIRED'
  | 'INVALID_NETWORK'
  | 'WALLET_NOT_FOUND'
  | 'INVALID_ADDRESS'
  | 'MONITORING_FAILED'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR'
  | (string & {});

/** A refusal from Keel: the HTTP status and the envelope's code, message, details and requestId (quote it to support). */
export class KeelApiError extends Error {
  override readonly name = 'KeelApiError';
  readonly status: number;
  readonly code: KeelErrorCode;
  readonly details?: Record<string, unknown>;
  readonly requestId?: string;
  readonly timestamp?: string;

  constructor(status: number, error: Partial<ErrorEnvelope['error']> & { message?: string }, requestId?: string) {
    super(error.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = error.code ?? `HTTP_${status}`;
    this.details = error.details;
    this.requestId = error.requestId ?? requestId;
    this.timestamp = error.timestamp;
  }

  /** The error an answer carries: its envelope when it has one, else the status alone. */
  static from(response: Response, body: unknown): KeelApiError {
    const envelope = body && typeof body === 'object' && 'error' in body ? (body as ErrorEnvelope).error : undefined;
    const message = typeof body === 'string' && body ? body : undefined;
    return new KeelApiError(response.status, envelope ?? { message }, response.headers.get('x-request-id') ?? undefined);
  }
}

/** What an openapi-fetch call resolves to. */
type FetchResult<T> = { data: T; error?: never; response: Response } | { data?: never; error: unknown; response: Response };

/** The data of a successful call that answers with a body; a refusal is thrown as a KeelApiError. */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<Exclude<T, undefined>> {
  const result = await call;
  if (result.error !== undefined || !result.response.ok) throw KeelApiError.from(result.response, result.error);
  return result.data as Exclude<T, undefined>;
}
