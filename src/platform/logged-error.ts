import { withUrlsAsOrigins } from './net/rpc-url';

/**
 * An error as a log line may carry it. Libraries hang what they sent and got on their errors: ethers
 * the request (the node's URL, whose path, query or `user:password@` holds a provider's key), the
 * JSON-RPC payload and the node's answer; knex its SQL in the message, PostgreSQL the failing row in
 * `detail`; fetch a cause quoting the URL. Written whole (pino's default), any of them puts a secret in the log.
 *
 * What is kept says what failed and where: the type, the message (ethers' short message, a database
 * error's own words without knex's SQL) and the stack's frames, with every URL cut to its origin; the
 * code and a few plain facts that name no value (a system call and its address, a PostgreSQL
 * constraint, table or column, ethers' action); and the cause, a few deep. Everything else (request,
 * response, info, payload, transaction, sql, bindings, detail) is left out.
 */
export function loggedError(value: unknown): unknown {
  if (typeof value === 'string') return bounded(withUrlsAsOrigins(value), MAX_TEXT);
  if (value === null || typeof value !== 'object') return value;
  return described(value as Described, 0, new Set());
}

/** The message a log line shows for an error (the safe one): for pino's `msg` when an error is logged alone. */
export function loggedMessage(error: Error): string {
  return safeMessage(error as Described);
}

const MAX_TEXT = 1_000;
const MAX_STACK = 4_000;
/** How many causes below the error are written. */
const MAX_CAUSES = 3;
/** Of an AggregateError's errors, how many are written. */
const MAX_AGGREGATED = 3;

/** Facts that name what failed, never what was sent: written when a string, number or boolean. */
const PLAIN_FACTS = [
  // Node's system errors and HTTP-ish errors
  'code',
  'errno',
  'syscall',
  'address',
  'port',
  'hostname',
  'status',
  'statusCode',
  // PostgreSQL's (pg's DatabaseError; objection's wrappers repeat some): never `detail`, `where` or
  // `internalQuery`, which quote the row or the SQL
  'severity',
  'constraint',
  'table',
  'column',
  'schema',
  'dataType',
  'routine',
  // ethers'
  'action',
  'operation',
  'reason',
] as const;

type Described = Record<string, unknown> & { message?: unknown; stack?: unknown; name?: unknown };

function described(e: Described, depth: number, seen: Set<object>): Record<string, unknown> {
  seen.add(e);
  const out: Record<string, unknown> = { type: typeName(e), message: safeMessage(e) };
  for (const key of PLAIN_FACTS) {
    const v = e[key];
    if (typeof v === 'number' || typeof v === 'boolean') out[key] = v;
    else if (typeof v === 'string') out[key] = bounded(withUrlsAsOrigins(v), MAX_TEXT);
  }
  const stack = safeStack(e, out.message as string);
  if (stack) out.stack = stack;
  const cause = causeOf(e);
  if (cause && !seen.has(cause)) out.cause = depth < MAX_CAUSES ? described(cause, depth + 1, seen) : { type: typeName(cause), message: '(deeper causes left out)' };
  if (Array.isArray(e.errors) && depth < MAX_CAUSES) {
    const errors = e.errors.filter((x): x is Described => x !== null && typeof x === 'object' && !seen.has(x));
    if (errors.length) out.errors = errors.slice(0, MAX_AGGREGATED).map((x) => described(x, depth + 1, seen));
  }
  return out;
}

function typeName(e: Described): string {
  const ctor = (e as { constructor?: { name?: unknown } }).constructor;
  return typeof ctor?.name === 'string' && ctor.name ? ctor.name : 'Object';
}

/**
 * The error's own words, URLs cut to their origin. ethers' message appends everything it knows
 * (request, payload, the node's answer): its `shortMessage` is the sentence alone. knex puts the SQL
 * before a database error's message (`insert into … - duplicate key …`; a raw statement may have
 * values written into it): the database's words are after the last ` - `. A wrapper that repeats its cause's message
 * (objection's DBError, a GraphQLError around a resolver's error) takes its cause's.
 */
function safeMessage(e: Described): string {
  const inner = wrapped(e);
  if (inner && inner.message === e.message) return safeMessage(inner);
  let text: string;
  if (typeof e.shortMessage === 'string' && typeof e.code === 'string') text = e.shortMessage;
  else if (typeof e.message !== 'string') text = '';
  else if (isDatabaseError(e) && e.message.includes(' - ')) text = e.message.slice(e.message.lastIndexOf(' - ') + 3);
  else text = e.message;
  return bounded(withUrlsAsOrigins(text), MAX_TEXT);
}

/** pg's DatabaseError: PostgreSQL's severity and five-character SQLSTATE. */
function isDatabaseError(e: Described): boolean {
  return typeof e.severity === 'string' && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code);
}

/**
 * The stack's frames under a header rebuilt from the safe message: the stack V8 writes starts with
 * the message as it was when the stack was first read (knex changes the message after the error is
 * made, so the header may still quote the SQL and its values). Frames name files and functions only.
 */
function safeStack(e: Described, message: string): string | undefined {
  if (typeof e.stack !== 'string') return undefined;
  const lines = e.stack.split('\n');
  let first = lines.length;
  while (first > 0 && /^\s+at /.test(lines[first - 1])) first--;
  const name = typeof e.name === 'string' && e.name ? e.name : typeName(e);
  return bounded([`${name}: ${message}`, ...lines.slice(first)].join('\n'), MAX_STACK);
}

/** What this error wraps: a GraphQLError's resolver error, objection's driver error. */
function wrapped(e: Described): Described | undefined {
  for (const key of ['originalError', 'nativeError']) {
    const v = e[key];
    if (v !== null && typeof v === 'object' && v !== e) return v as Described;
  }
  return undefined;
}

/** The error beneath: the standard `cause`, what a wrapper wraps, or the JSON-RPC error ethers got. */
function causeOf(e: Described): Described | undefined {
  const info = e.info as { error?: unknown } | undefined;
  for (const v of [e.cause, wrapped(e), e.error, info?.error]) {
    if (v !== null && typeof v === 'object' && v !== e) return v as Described;
  }
  return undefined;
}

function bounded(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
