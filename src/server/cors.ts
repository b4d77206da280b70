import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { header } from './request-context';

/** The request headers Keel reads, which a browser must be allowed to send. */
export const CORS_ALLOWED_HEADERS = ['apiKey', 'orgId', 'appId', 'Authorization', 'Idempotency-Key', 'X-Request-Id', 'Content-Type'];
/** The response headers a browser client needs to read. */
export const CORS_EXPOSED_HEADERS = ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Quota-Limit', 'X-Quota-Remaining', 'X-Quota-Reset', 'Idempotent-Replayed', 'Retry-After'];
const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';
/** How long a browser may reuse a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * The origin rule of both hosts, for HTTP (CORS) and websocket upgrades alike: a request without
 * an Origin is not from a browser page and is not the rule's business; one with an Origin must name
 * an origin of the allow-list (CORS_ORIGINS, empty by default: no page may call Keel).
 */
export class OriginPolicy {
  private readonly allowed: ReadonlySet<string>;

  constructor(origins: readonly string[]) {
    this.allowed = new Set(origins);
  }

  /**
   * Whether a request carrying these headers may proceed: no Origin, an allowed one, or the host's
   * own (a page Keel served itself, such as /console, opening graphql-ws on the same host: browsers
   * send Origin on same-origin websockets too; only the host is compared, so a TLS proxy in front
   * does not matter, and a page elsewhere cannot make a browser send Keel's origin).
   */
  admits(headers: IncomingHttpHeaders): boolean {
    const origin = header(headers.origin);
    return origin === undefined || this.allowed.has(origin) || sameHost(origin, header(headers.host));
  }

  /** The request's Origin when it is on the allow-list. */
  allowedOrigin(headers: IncomingHttpHeaders): string | undefined {
    const origin = header(headers.origin);
    return origin !== undefined && this.allowed.has(origin) ? origin : undefined;
  }

  get enabled(): boolean {
    return this.allowed.size > 0;
  }
}

function sameHost(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * The CORS headers of an answer that is not a preflight: its own origin echoed to an allowed origin,
 * with the headers a page may read; nothing else to any other (Vary: Origin either way, once an
 * allow-list is set). Every answer gets them: the hook below sets them before any other, and the
 * host sets them on the answers Fastify makes before any hook runs (an undecodable URL).
 */
export function setCorsHeaders(policy: OriginPolicy, request: FastifyRequest, reply: FastifyReply): void {
  // Answers differ by Origin, so a shared cache must key them by it.
  if (policy.enabled) reply.header('Vary', 'Origin');
  const origin = policy.allowedOrigin(request.headers);
  if (origin) reply.header('Access-Control-Allow-Origin', origin).header('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS.join(', '));
}

/**
 * CORS without cookies: credentials are headers (apiKey or a bearer token), never ambient, so no
 * Allow-Credentials. An allowed origin gets its own origin echoed on every answer (errors too:
 * register this hook before every other) and a preflight answered 204; any other origin gets no
 * CORS header at all, so the browser keeps the answer from the page.
 */
export function registerCors(app: FastifyInstance, policy: OriginPolicy): void {
  // A callback hook: nothing here waits. A preflight is answered here and goes no further.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const preflight = request.method === 'OPTIONS' && header(request.headers.origin) !== undefined && header(request.headers['access-control-request-method']) !== undefined;
    if (!preflight) {
      setCorsHeaders(policy, request, reply);
      return done();
    }
    if (policy.enabled) reply.header('Vary', 'Origin');
    const origin = policy.allowedOrigin(request.headers);
    if (!origin) return reply.code(204).send();
    reply
      .code(204)
      .header('Access-Control-Allow-Origin', origin)
      .header('Vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers')
      .header('Access-Control-Allow-Methods', ALLOWED_METHODS)
      .header('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS.join(', '))
      .header('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS))
      .send();
  });
}
