import type { FastifyInstance } from 'fastify';
import { DocumentNode, GraphQLError, GraphQLSchema } from 'graphql';
import { WebSocket, WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { CloseCode } from 'graphql-ws';
import { isKeelError, KeelError } from '../platform/errors';
import type { Host } from '../platform/auth/permissions';
import type { Platform } from '../platform/platform';
import type { Principal } from '../platform/auth/principal';
import type { GraphQLContext } from '../graphql-kit/context';
import { asGraphQLError, errorExtensions, toKeelError } from '../graphql-kit/errors';
import { subscriptionCap } from './subscription-cap';
import { prepareSocketOperation } from './socket-operation';
import { SocketSession, SocketSessions } from './socket-sessions';
import { requestIdFor } from './request-context';
import { authorizeDocumentText } from '../graphql-kit/root-field-grants';
import type { OriginPolicy } from './cors';
import { DeliveredResults, Result, subscribeShared } from './shared-execution';
import { directDelivery } from './direct-delivery';
import type { PushSource } from '../platform/events/shared-stream';
import { boundedDelivery } from './bounded-delivery';
import { coalesceWrites } from './write-coalescing';
import { subscribePayloadRefusal } from './text-check';
import type { Duplex } from 'node:stream';

const isAsyncIterable = (value: unknown): value is DeliveredResults => typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

export interface GraphqlWsOptions {
  host: Host;
  schema: GraphQLSchema;
  platform: Platform;
  /** Browser pages of other origins may not open a socket (the same rule as CORS). */
  origins: OriginPolicy;
  validate: (schema: GraphQLSchema, document: DocumentNode) => readonly GraphQLError[];
  contextFor(principal: Principal, requestId: string): GraphQLContext;
}

type ConnectionExtra = {
  session?: SocketSession;
  requestId?: string;
};

/** How often every open connection's key is re-checked even without an invalidation (one lost with Redis). */
const MIN_RECHECK_MS = 1_000;

/** Close code for a connection that does not read its messages fast enough (see docs/trading-and-realtime.md, "Realtime feeds"). */
export const SLOW_CONSUMER_CLOSE_CODE = 4008;
/**
 * Close code for a connection_init refused with 429 RATE_LIMIT_EXCEEDED: over the key's rate limit, or
 * over the open connections a key or an organisation may hold. graphql-ws's own code for too many
 * initialisation requests, after which its clients do not reconnect by themselves.
 */
export const TOO_MANY_CLOSE_CODE = CloseCode.TooManyInitialisationRequests;
/** A slow consumer's socket is destroyed this long after its close frame was queued, if it has not read it by then. */
const SLOW_CONSUMER_GRACE_MS = 5_000;

/** Closes a connection as a slow consumer (once), and destroys it if it does not read its close frame in time. */
function closeSlowConsumer(socket: WebSocket, reason: string, logger: Platform['logger']): void {
  if (socket.readyState !== socket.OPEN) return;
  logger.warn({ code: SLOW_CONSUMER_CLOSE_CODE, reason }, 'realtime: slow consumer disconnected');
  socket.close(SLOW_CONSUMER_CLOSE_CODE, reason);
  setTimeout(() => socket.terminate(), SLOW_CONSUMER_GRACE_MS).unref();
}

/**
 * graphql-ws on the host's port at /graphql. Credentials come in connectionParams (`apiKey` and
 * `orgId`, or an access token as `token`); every subscribe
 * message re-checks the key and spends its rate limit and the monthly quota like an HTTP request, has its
 * text and nesting checked like an HTTP body (text-check.ts), and only subscriptions
 * run. A connection is closed (4401) once its key is revoked, its rotated-out secret expires or its token expires.
 * Opening one spends a request of the key's rate limit, within caps of open connections per key and
 * per organisation (socket-sessions.ts); refused, it is closed 4429 with the reason.
 */
export function attachGraphqlWs(app: FastifyInstance, opts: GraphqlWsOptions): void {
  const { host, schema, platform, origins, validate, contextFor } = opts;
  const { config } = platform;
  const sessions = new SocketSessions(platform.authenticator, host, {
    recheckEveryMs: Math.max(config.AUTH_CACHE_TTL_MS, MIN_RECHECK_MS),
    maxPerKey: config.WS_MAX_CONNECTIONS_PER_KEY,
    maxPerOrganization: config.WS_MAX_CONNECTIONS_PER_ORGANIZATION,
    // connection_init is a request of the key's rate limit (not of the month's quota).
    spend: (principal) => platform.rateLimiter.consume(principal.tier, principal.apiKeyId),
  });
  const capSubscriptions = subscriptionCap(config.WS_MAX_SUBSCRIPTIONS_PER_CONNECTION);
  const wss = new WebSocketServer({ noServer: true, maxPayload: config.BODY_LIMIT_BYTES });
  /** Each connection's TCP socket, whose writes are coalesced per turn of the event loop. */
  const rawSockets = new WeakMap<WebSocket, Duplex>();
  const wsServer = useServer<Record<string, unknown>, ConnectionExtra>(
    {
      schema,
      // An event delivered to many subscribers is executed once per distinct operation.
      subscribe: subscribeShared,
      onConnect: async (ctx) => {
        const params = ctx.connectionParams ?? {};
        const credentials = {
          apiKey: params.apiKey as string | undefined,
          orgId: (params.orgId ?? params.appId) as string | undefined,
          token: typeof params.token === 'string' ? params.token : undefined,
        };
        try {
          const session = await sessions.open(credentials, (code, reason) => ctx.extra.socket.close(code, reason));
          // Closed while the key was checked: onClose has run (or will) without a session to end; its place in the caps is given back here.
          if (ctx.extra.socket.readyState !== WebSocket.OPEN) {
            sessions.end(session);
            return false;
          }
          ctx.extra.session = session;
        } catch (error) {
          // A token's holder needs to know whether to fetch a new one: 4401 with the reason (graphql-ws then sends no 4403 of its own).
          if (credentials.token !== undefined && isKeelError(error) && error.status === 401) ctx.extra.socket.close(CloseCode.Unauthorized, error.message);
          // Over the rate limit or the connection caps: 4429 with the reason.
          if (isKeelError(error) && error.status === 429) ctx.extra.socket.close(TOO_MANY_CLOSE_CODE, refusalReason(error));
          return false;
        }
        ctx.extra.requestId = requestIdFor(ctx.extra.request);
        return true;
      },
      onClose: (ctx) => {
        if (ctx.extra.session) sessions.end(ctx.extra.session);
      },
      onSubscribe: async (ctx, _id, payload) => {
        let principal: Principal;
        try {
          principal = await sessions.check(ctx.extra.session!);
          await platform.rateLimiter.consume(principal.tier, principal.apiKeyId);
          // A subscribe is a request of the month; what a running subscription delivers is not.
          await platform.quota.spend(principal.organizationId, principal.apiKeyId);
          authorizeDocumentText(contextFor(principal, ctx.extra.requestId!), schema, payload.query, payload.operationName, payload.variables);
          // Then the message's text and nesting, as an HTTP body's: nothing below walks variables deeper than BODY_MAX_DEPTH.
          const refusal = subscribePayloadRefusal(payload, config.BODY_MAX_DEPTH);
          if (refusal) throw refusal;
        } catch (error) {
          return [asGraphQLError(error)];
        }
        const capped = capSubscriptions(ctx);
        if (capped) return capped;
        const operation = prepareSocketOperation(schema, validate, payload);
        if (Array.isArray(operation)) return operation;
        return { ...operation, schema, contextValue: contextFor(principal, ctx.extra.requestId!) };
      },
      onOperation: (ctx, id, _payload, _args, result) => {
        if (!isAsyncIterable(result)) return undefined;
        const socket = ctx.extra.socket;
        const slow = (reason: string) => closeSlowConsumer(socket, reason, platform.logger);
        // A shared feed's results go straight to the socket, serialised once for all their subscribers.
        if (result.attach) {
          return directDelivery(result as DeliveredResults & PushSource<Result>, {
            socket,
            id,
            maxQueued: config.WS_MAX_QUEUED_MESSAGES,
            maxBufferedBytes: config.WS_MAX_BUFFERED_BYTES,
            overflow: slow,
            withErrors: (r) => ({ ...r, errors: r.errors!.map((e) => formatWsError(e, ctx.extra.requestId ?? '')) as never }),
            beforeSend: () => coalesceWrites(rawSockets.get(socket)),
          });
        }
        return boundedDelivery(result, config.WS_MAX_QUEUED_MESSAGES, () => slow(`Slow consumer: more than ${config.WS_MAX_QUEUED_MESSAGES} messages of a subscription waiting`));
      },
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => formatWsError(e, '')) as never,
      // The messages graphql-ws sends itself (subscriptions other than shared feeds, e.g. `events`).
      onNext: (ctx, _id, _payload, _args, result) => {
        coalesceWrites(rawSockets.get(ctx.extra.socket));
        if (ctx.extra.socket.bufferedAmount > config.WS_MAX_BUFFERED_BYTES) {
          closeSlowConsumer(ctx.extra.socket, `Slow consumer: more than ${config.WS_MAX_BUFFERED_BYTES} bytes unsent`, platform.logger);
        }
        return result.errors?.length ? { ...result, errors: result.errors.map((e) => formatWsError(e, ctx.extra.requestId ?? '')) as never } : result;
      },
    },
    wss,
  );
  app.server.on('upgrade', (request, socket, head) => {
    if ((request.url ?? '').split('?')[0] !== '/graphql') {
      socket.destroy();
      return;
    }
    // Browsers send no preflight for a websocket: a page of a disallowed origin is refused here.
    if (!origins.admits(request.headers)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 18\r\n\r\nOrigin not allowed');
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      rawSockets.set(ws, socket);
      wss.emit('connection', ws, request);
    });
  });
  app.addHook('onClose', async () => {
    sessions.dispose();
    await wsServer.dispose();
  });
}

/** A 429's message, with when to retry when the rate limit says (a close reason holds at most 123 bytes). */
function refusalReason(error: KeelError): string {
  return error.retryAfterSeconds === undefined ? error.message : `${error.message} (in ${error.retryAfterSeconds} s)`;
}

function formatWsError(error: Parameters<typeof toKeelError>[0], requestId: string) {
  const keel = toKeelError(error);
  return { message: keel.message, path: (error as { path?: unknown }).path, extensions: errorExtensions(keel, requestId) };
}
