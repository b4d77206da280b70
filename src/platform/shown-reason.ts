import { shortReason } from './chain-port/evm-transactions';
import { TransferRefused } from './chain-port/chain-port';
import { isKeelError } from './errors';
import { withUrlsAsOrigins } from './net/rpc-url';

/** What a caller reads in place of an error Keel has no words of its own for. */
export const INTERNAL_REASON = "internal error (see the node's log)";

/** A failure whose message Keel wrote for whoever reads the row it ends in: shown as it is. */
export class ShownFailure extends Error {}

const MAX_REASON = 500;

/**
 * The reason a caller may read for an error that ends in a row or an answer (an execution's or a
 * line's `error`, a webhook event, the CLI's report): a KeelError's or a ShownFailure's own words;
 * a chain's refusal as the node or ethers worded it (a revert reason, "insufficient funds", "nonce
 * too low"). Anything else (a database error, whose message knex prefixes with the SQL and its
 * values; an unexpected exception) is INTERNAL_REASON. Every URL is cut to its origin: a node's URL
 * holds its key. It logs nothing: the caller logs the error object once, whatever reason is shown
 * (`log.warn({ err }, …)`), and the log's serializer keeps what is safe of it; that line is the
 * node's log INTERNAL_REASON points to.
 */
export function shownReason(error: unknown): string {
  if (isKeelError(error) || error instanceof ShownFailure || error instanceof TransferRefused) return withUrlsAsOrigins(error.message).slice(0, MAX_REASON);
  if (isChainError(error)) return shortReason(error);
  return INTERNAL_REASON;
}

/** ethers' errors carry a code of its own and a short message; a database error carries no short message. */
function isChainError(error: unknown): boolean {
  const e = error as { code?: unknown; shortMessage?: unknown } | null;
  return e !== null && typeof e === 'object' && typeof e.code === 'string' && typeof e.shortMessage === 'string';
}
