/**
 * Retries of transient refusals, under one bounded policy:
 * - 429 RATE_LIMIT_EXCEEDED: wait for Retry-After, else until X-RateLimit-Reset (UTC epoch seconds);
 * - 409 NOT_LEADER (an order-book node that does not lead the market's shard): wait Retry-After;
 * - 409 CONFLICT with details.reason IDEMPOTENCY_KEY_IN_PROGRESS (an earlier attempt under the same
 *   key still runs, e.g. one whose answer a gateway's 504 lost): wait Retry-After, then send it again
 *   under the same key until it replays that attempt's committed answer;
 * - 502, 503, 504 and a connection that failed before any answer: Retry-After, else exponential backoff.
 * Every wait gets random jitter, so clients refused together do not come back together. A write is
 * retried only when it carries an Idempotency-Key: each attempt sends the same request, key included,
 * so Keel does the work at most once and a retry after a lost answer gets the committed result.
 */

export interface RetryOptions {
  /** Retries after the first attempt (default 5, the spec's recommendation). 0 turns retries off. */
  retries?: number;
  /** First backoff step when the answer names no wait (default 500 ms); doubled per retry. */
  baseDelayMs?: number;
  /** The longest wait; an answer asking for longer is returned as it is (default 30 s). */
  maxDelayMs?: number;
  /** Upper bound of the jitter added to a wait the server named (default 250 ms). */
  jitterMs?: number;
  /** Called before each wait, e.g. to log it: the event holds no header, so no credential. */
  onRetry?(event: RetryEvent): void;
  /** For tests: the random source (0 ≤ x < 1), the clock and the sleep. */
  random?: () => number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * A retry about to wait, safe to log: the request's method and URL, never the Request itself, whose
 * headers carry the credentials (apiKey and orgId, or Authorization: Bearer).
 */
export interface RetryEvent {
  method: string;
  url: string;
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
  /** The refusal being retried: a status and Keel's error code, or the connection error. */
  status?: number;
  code?: string;
  error?: unknown;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const UPSTREAM_STATUSES = new Set([502, 503, 504]);

export const isWrite = (method: string): boolean => WRITES.has(method.toUpperCase());

/** May this request be sent again? Reads always; writes only under an Idempotency-Key. */
export function isRetryable(request: Request): boolean {
  return !isWrite(request.method) || request.headers.has('idempotency-key');
}

/** Retry-After as milliseconds from now (delta-seconds or an HTTP date); undefined when absent or unreadable. */
function retryAfterMs(headers: Headers, now: number): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function rateLimitResetMs(headers: Headers, now: number): number | undefined {
  const reset = Number(headers.get('x-ratelimit-reset') ?? NaN);
  return Number.isFinite(reset) && reset > 0 ? Math.max(0, reset * 1000 - now) : undefined;
}

/** The 409 CONFLICT's details.reason of a repeat while the request under its Idempotency-Key still runs. */
export const IDEMPOTENCY_KEY_IN_PROGRESS = 'IDEMPOTENCY_KEY_IN_PROGRESS';

/** The refusal's Keel error code and details.reason, read from its envelope. */
async function refusalOf(response: Response): Promise<{ code?: string; reason?: string }> {
  try {
    const body = (await response.clone().json()) as { error?: { code?: unknown; details?: { reason?: unknown } } };
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    return { code: text(body?.error?.code), reason: text(body?.error?.details?.reason) };
  } catch {
    return {};
  }
}

async function errorCode(response: Response): Promise<string | undefined> {
  return (await refusalOf(response)).code;
}

/**
 * How long to wait before retrying this answer (its Keel error code read from the body), or
 * undefined when it is not to be retried. `retry` counts from 1.
 */
export async function retryDelayFor(response: Response, retry: number, options: RetryOptions = {}): Promise<{ delayMs: number; code?: string } | undefined> {
  const now = (options.now ?? Date.now)();
  const named = (ms: number | undefined) => (ms === undefined ? backoffMs(retry, options) : ms + (options.random ?? Math.random)() * (options.jitterMs ?? 250));
  if (response.status === 429) {
    const code = await errorCode(response);
    // A monthly quota does not come back within a retry's wait.
    if (code === 'QUOTA_EXCEEDED') return undefined;
    return { delayMs: named(retryAfterMs(response.headers, now) ?? rateLimitResetMs(response.headers, now)), code };
  }
  if (response.status === 409) {
    const { code, reason } = await refusalOf(response);
    // Any other 409 is the resource's state: not transient.
    const transient = code === 'NOT_LEADER' || (code === 'CONFLICT' && reason === IDEMPOTENCY_KEY_IN_PROGRESS);
    return transient ? { delayMs: named(retryAfterMs(response.headers, now)), code } : undefined;
  }
  if (UPSTREAM_STATUSES.has(response.status)) return { delayMs: named(retryAfterMs(response.headers, now)), code: await errorCode(response) };
  return undefined;
}

/** Exponential backoff with full jitter: a random wait up to base·2^(retry-1), capped. */
export function backoffMs(retry: number, options: RetryOptions = {}): number {
  const ceiling = Math.min(options.maxDelayMs ?? 30_000, (options.baseDelayMs ?? 500) * 2 ** (retry - 1));
  return (options.random ?? Math.random)() * ceiling;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A fetch that retries under the policy above; give it to openapi-fetch as `fetch`. The last answer
 * (or connection error) is returned (thrown) when retries run out or a wait would be too long.
 */
export function retryingFetch(options: RetryOptions = {}, fetchImpl: (request: Request) => Promise<Response> = (r) => globalThis.fetch(r)): (request: Request) => Promise<Response> {
  const retries = options.retries ?? 5;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  const sleep = options.sleep ?? defaultSleep;
  return async (request) => {
    const retryable = retries > 0 && isRetryable(request);
    for (let retry = 1; ; retry++) {
      // The original stays unread, so every attempt sends the same body.
      const attempt = retryable ? request.clone() : request;
      let response: Response;
      try {
        response = await fetchImpl(attempt);
      } catch (error) {
        if (!retryable || retry > retries || request.signal.aborted) throw error;
        const delayMs = backoffMs(retry, options);
        options.onRetry?.({ method: request.method, url: request.url, retry, delayMs, error });
        await sleep(delayMs);
        continue;
      }
      if (!retryable || retry > retries) return response;
      const next = await retryDelayFor(response, retry, options);
      if (!next || next.delayMs > maxDelayMs) return response;
      options.onRetry?.({ method: request.method, url: request.url, retry, delayMs: next.delayMs, status: response.status, code: next.code });
      // The refused answer's body is not read: release its connection.
      await response.body?.cancel().catch(() => undefined);
      await sleep(next.delayMs);
    }
  };
}
