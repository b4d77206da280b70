import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Host } from '../platform/auth/permissions';
import type { Platform } from '../platform/platform';
import { IdempotencyStore, KEY_MAX_LENGTH } from '../platform/idempotency';
import { KeelError } from '../platform/errors';
import { UnitOfWork } from '../platform/db/unit-of-work';
import { bearerToken, header } from './request-context';
import { setRateLimitHeaders } from './rate-limit-headers';
import { setQuotaHeaders } from './quota-headers';
import { isConsolePath } from './console-route';
import { isApiPagePath, isExplorerPageRequest } from './api-pages';
import type { Principal } from '../platform/auth/principal';
import { QuotaExceeded } from '../platform/quota/monthly-quota';
import { onlyReadsUsage, USAGE_PATH } from './usage-reads';
import { graphqlGetParams } from './graphql-get-params';

const OPEN_PATHS = new Set(['/health', '/ready', '/metrics', '/v1/openapi.json']);
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Routes a host registered as public (createHost's publicRoutes): no API key, their own rate limit. */
function isPublicRoute(request: FastifyRequest): boolean {
  return (request.routeOptions.config as { public?: boolean } | undefined)?.public === true;
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Per-request guards shared by REST and GraphQL: authentication (apiKey and orgId headers, or an
 * access token as `Authorization: Bearer`), then the key's rate limit and the organisation's monthly
 * quota (onRequest, before the body is read), then idempotency (a preHandler of the routes that change
 * state, once the body is parsed).
 * The handler runs in a unit-of-work scope that carries the request's claim, so the work it
 * commits is recorded on the claim in the same transaction (see UnitOfWork).
 */
export function registerGuards(app: FastifyInstance, host: Host, platform: Platform): void {
  const explorer = platform.config.GRAPHQL_EXPLORER;
  // A callback hook: a key fresh in this node's cache is authenticated without a promise, so the
  // rate limit's Redis call starts in the same turn as the request.
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    reply.header('X-Request-Id', request.id);
    const path = pathOf(request.url);
    if (OPEN_PATHS.has(path) || isConsolePath(path) || isApiPagePath(path) || request.method === 'OPTIONS' || isPublicRoute(request)) return done();
    if (explorer && path === '/graphql' && isExplorerPageRequest(request)) return done();
    let principal: Principal | Promise<Principal>;
    try {
      principal = platform.authenticator.principalFor(host, {
        apiKey: header(request.headers.apikey),
        orgId: header(request.headers.orgid) ?? header(request.headers.appid),
        token: bearerToken(request.headers.authorization),
      });
    } catch (error) {
      return done(error as Error);
    }
    if (principal instanceof Promise) principal.then((p) => spendRateLimit(request, reply, p, done), done);
    else spendRateLimit(request, reply, principal, done);
  });

  // A request spends one of the key's rate limit and of the month as it arrives (a GraphQL document
  // of several mutations spends the rest once parsed: spendFurtherRequests). A spent quota's refusal
  // of a usage read, or of any GraphQL request, waits: whether it only reads the usage is known later.
  const spendRateLimit = (request: FastifyRequest, reply: FastifyReply, principal: Principal, done: (error?: Error) => void) => {
    request.principal = principal;
    spendBudgets(platform, reply, principal, 1, true, (error) => {
      if (!(error instanceof QuotaExceeded)) return done(error);
      const path = pathOf(request.url);
      if (path !== USAGE_PATH && path !== '/graphql') return done(error);
      setQuotaHeaders(reply, error.state);
      if (path === '/graphql') request.quotaRefusal = error;
      done();
    });
  };

  // Idempotency belongs to the routes that change state: reads and unknown paths skip its two hooks.
  // onRoute sees only routes added after it, so the guards are registered before any route.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => STATE_CHANGING.has(m))) return;
    route.preHandler = [claimIdempotency, ...hooksOf(route.preHandler)];
    route.onSend = [...hooksOf(route.onSend), settleIdempotency];
  });

  // A spent quota refuses a GraphQL request here, before it runs (and before its Idempotency-Key is
  // claimed: registered after idempotency's hook, it goes first), unless it only reads the usage.
  app.addHook('onRoute', (route) => {
    if (route.url !== '/graphql') return;
    route.preHandler = [refuseSpentQuota, ...hooksOf(route.preHandler)];
  });

  const refuseSpentQuota = (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    const refusal = request.quotaRefusal;
    if (!refusal) return done();
    done(onlyReadsUsage(request.method === 'GET' ? graphqlGetParams(request) : request.body) ? undefined : refusal);
  };

  const claimIdempotency = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    // Reads, and writes without a key, pass straight through, outside any unit-of-work scope.
    const key = header(request.headers['idempotency-key']);
    if (key === undefined || !STATE_CHANGING.has(request.method) || !request.principal) return done();
    // A callback hook: what follows it, the handler included, runs inside the scope, which closes
    // once the answer is made (onSend), not when the connection goes: a client that gives up does
    // not stop the work, which must still be recorded on the claim. A replayed answer is sent from
    // here: the request goes no further.
    UnitOfWork.scope(
      (close) => (request.closeUnitOfWorkScope = close),
      () => claimIdempotencyKey(request, reply, key).then((replayed) => replayed || done(), done),
    );
  };

  /** Claims the request's key, or replays the answer an earlier attempt recorded (true). */
  const claimIdempotencyKey = async (request: FastifyRequest, reply: FastifyReply, key: string): Promise<boolean> => {
    if (!request.principal) return false;
    if (!IdempotencyStore.validKey(key)) {
      throw KeelError.invalidField('Idempotency-Key', `must be 1 to ${KEY_MAX_LENGTH} printable ASCII characters (a UUID v4 is recommended)`);
    }
    key = request.principal.claimKey(key);
    const claim = await platform.idempotency.claim({
      apiKeyId: request.principal.apiKeyId,
      key,
      method: request.method,
      path: pathOf(request.url),
      body: request.body,
    });
    if (claim.kind === 'replay') {
      const { status, body, contentType } = claim.response;
      reply.code(status >= 200 && status < 300 ? 200 : status).header('Idempotent-Replayed', 'true');
      if (contentType) reply.type(contentType);
      reply.send(body);
      return true;
    }
    request.idempotencyKey = key;
    UnitOfWork.bindClaim({ apiKeyId: request.principal.apiKeyId, key });
    return false;
  };

  const settleIdempotency = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
    request.closeUnitOfWorkScope?.();
    if (!request.idempotencyKey || !request.principal || reply.getHeader('Idempotent-Replayed')) return done(null, payload);
    settleIdempotencyKey(request, reply, payload).then((sent) => done(null, sent), done);
  };

  const settleIdempotencyKey = async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    const key = request.idempotencyKey;
    if (!key || !request.principal) return payload;
    request.idempotencyKey = undefined;
    // A 5xx is not stored: the claim is released with the results its work recorded, so a retry runs
    // again and gets what was committed. A GraphQL answer is 200 whatever its errors: one with an
    // error REST would answer 5xx (answeredServerError) is a 5xx here. Not stored either: a transient
    // refusal that says when to retry (409 NOT_LEADER with Retry-After), so the retry, at the leader,
    // runs instead of replaying the refusal.
    if (reply.statusCode >= 500 || request.answeredServerError || reply.hasHeader('retry-after') || typeof payload !== 'string') {
      await platform.idempotency.release(request.principal.apiKeyId, key);
    } else {
      const contentType = reply.getHeader('content-type');
      await platform.idempotency.complete(request.principal.apiKeyId, key, {
        status: reply.statusCode,
        body: payload,
        contentType: typeof contentType === 'string' ? contentType : null,
      });
    }
    return payload;
  };
}

/**
 * Spends `requests` of the key's rate limit and of the organisation's monthly quota, all or none
 * (but a request's `arrival` is counted by the rate limit even when refused), and sets their headers; `done`
 * gets the 429 when either has no room. Both are spent in the same turn, so one write takes both to
 * Redis; what one spent is given back when the other refuses.
 */
function spendBudgets(platform: Platform, reply: FastifyReply, principal: Principal, requests: number, arrival: boolean, done: (error?: Error) => void): void {
  const at = platform.quota.now();
  const quota = platform.quota.spend(principal.organizationId, principal.apiKeyId, at, requests);
  platform.rateLimiter.consume(principal.tier, principal.apiKeyId, requests).then(
    (state) => {
      quota.then(
        (spent) => {
          setRateLimitHeaders(reply, state);
          if (spent) setQuotaHeaders(reply, spent);
          done();
        },
        (refused: Error) => {
          if (arrival) {
            setRateLimitHeaders(reply, state);
            return done(refused);
          }
          // The headers stay those of what was spent before.
          platform.rateLimiter.refund(principal.tier, principal.apiKeyId, requests).then(
            () => done(refused),
            (err: Error) => {
              platform.logger.warn({ err }, 'the rate limit spent on a document the quota refused was not given back');
              done(refused);
            },
          );
        },
      );
    },
    (refused: Error) => {
      quota.then(
        (spent) => spent && platform.quota.refund(principal.organizationId, principal.apiKeyId, at, requests),
        () => undefined,
      );
      done(refused);
    },
  );
}

/**
 * Spends what a GraphQL request counts for (`requests`, see `requestsOf`: one per mutation of its
 * document) beyond the one its arrival spent, before any of it runs: 429 RATE_LIMIT_EXCEEDED or
 * QUOTA_EXCEEDED when the key's budget or the month cannot hold them all, and then none is spent.
 * A request the spent quota already refuses spends nothing more.
 */
export function spendFurtherRequests(platform: Platform, request: FastifyRequest, reply: FastifyReply, requests: number): Promise<void> {
  const principal = request.principal;
  if (requests <= 1 || !principal || request.quotaRefusal) return Promise.resolve();
  return new Promise((resolve, reject) => spendBudgets(platform, reply, principal, requests - 1, false, (error) => (error ? reject(error) : resolve())));
}

/** A route option's hooks as a list (Fastify takes one function or an array). */
function hooksOf<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}
