import { KeelError } from './errors';
import { DependencyTimeout } from './time-bound';

/** Node socket failures: the peer is down, refused us, went away or cannot be reached. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** PostgreSQL SQLSTATEs of a server going away or refusing connections (class 08, 57P01–57P03, 53300). */
const POSTGRES_CODES = /^(08...|57P0[123]|53300)$/;
/** Errors whose class name says a client lost its connection or gave up waiting (knex pool, node-redis, ioredis). */
const CONNECTION_ERRORS = new Set([
  'DependencyTimeout',
  'KnexTimeoutError',
  'ClientClosedError',
  'ClientOfflineError',
  'ConnectionTimeoutError',
  'SocketClosedUnexpectedlyError',
  'TimeoutError',
]);
/** node-postgres and ioredis say it only in the message (which knex prefixes with the SQL). */
const CONNECTION_MESSAGES = /(Connection terminated|Client has encountered a connection error|Connection is closed|Stream isn't writeable|The queue is full)/;

/** True when `error` (or what caused it) says PostgreSQL or Redis could not be reached or went away. */
export function isConnectionFailure(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 4) return false;
  const { code } = error as { code?: unknown };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || POSTGRES_CODES.test(code))) return true;
  if (CONNECTION_ERRORS.has(error.name) || CONNECTION_ERRORS.has(error.constructor.name) || CONNECTION_MESSAGES.test(error.message)) return true;
  // objection's DBError keeps the driver's error (and its SQLSTATE) as nativeError.
  const nested = [error.cause, (error as { nativeError?: unknown }).nativeError, ...(error instanceof AggregateError ? error.errors : [])];
  return nested.some((e) => isConnectionFailure(e, depth + 1));
}

/**
 * The one place that decides when a failure is an outage of PostgreSQL or Redis rather than a bug:
 * the caller gets 503 SERVICE_UNAVAILABLE (retry later) instead of 500.
 */
export function unavailableError(error: unknown): KeelError | undefined {
  if (!isConnectionFailure(error)) return undefined;
  return new KeelError('SERVICE_UNAVAILABLE', 'A backing service is temporarily unavailable; retry shortly');
}
