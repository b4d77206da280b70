import Fastify, { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import { GraphQLError, GraphQLSchema } from 'graphql';
import type { Host } from '../platform/auth/permissions';
import type { Platform } from '../platform/platform';
import type { Principal } from '../platform/auth/principal';
import type { GraphQLContext } from '../graphql-kit/context';
import { errorExtensions, toKeelError } from '../graphql-kit/errors';
import { MAX_TOKENS, queryLimitRules, validateWithLimits } from '../graphql-kit/query-limits';
import { storableLiterals } from '../graphql-kit/storable-literals';
import { isKeelError, KeelError } from '../platform/errors';
import { authorizeDocumentText, requestsOf } from '../graphql-kit/root-field-grants';
import { registerRestRoutes } from '../../rest-compat/handler';
import { HOST_API, hostOpenApi } from '../../rest-compat/host-documents';
import { errorHandler, sendError } from './error-handler';
import { registerGuards, spendFurtherRequests } from './guards';
import { OriginPolicy, registerCors, setCorsHeaders } from './cors';
import { GraphQLParams, persistedQueryAsk, PersistedQueryStore, withoutPersistedQuery } from './persisted-queries';
import { graphqlGetParams } from './graphql-get-params';
import { registerTextCheck } from './text-check';
import { registerClosingRefusal } from './closing-refusal';
import { clientErrorHandler } from './client-error';
import { MAX_URL_LENGTH, registerProtocolChecks } from './protocol-checks';
import { requestIdFor } from './request-context';
import { attachGraphqlWs } from './graphql-ws';
import { registerMetricsRoute } from './metrics-route';
import { registerConsoleRoute } from './console-route';
import { isExplorerPageRequest, registerApiReference, registerGraphqlExplorer } from './api-pages';
import { checkReadiness } from '../platform/readiness';
import type { RateLimitState } from '../platform/rate-limit';
import { setRateLimitHeaders } from './rate-limit-headers';

/**
 * The HTTP request a GraphQL context was made for, for the Apollo plugin (not the resolvers): under
 * a symbol, which the copy of the context Apollo hands its plugins keeps.
 */
const HTTP_REQUEST = Symbol('HTTP request');
type HttpGraphQLContext = GraphQLContext & { [HTTP_REQUEST]: FastifyRequest };

export interface HostOptions {
  host: Host;
  schema: GraphQLSchema;
  platform: Platform;
  /** What the resolvers are handed in their context (the composition root's resolverServices). */
  services: object;
  /** Routes served without an API key (the public checkout API and page), each request spending its budgets first. */
  publicRoutes?: { register(app: FastifyInstance): void; budgets: PublicBudgets };
}

/** What a request without an API key spends before it is served; 429 RATE_LIMIT_EXCEEDED when over. */
export interface PublicBudgets {
  spend(request: FastifyRequest): Promise<RateLimitState>;
}

export interface RunningHost {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

/** One API host: GraphQL (HTTP and graphql-ws) and its REST shim, behind the shared guards. */
export async function createHost(opts: HostOptions): Promise<FastifyInstance> {
  const { host, schema, platform, services } = opts;
  const origins = new OriginPolicy(platform.config.CORS_ORIGINS);
  const app = Fastify({
    bodyLimit: platform.config.BODY_LIMIT_BYTES,
    // Off by default: request.ip is the peer. Behind a TLS proxy, TRUST_PROXY names it, and request.ip
    // is the address its X-Forwarded-For gives (the payer's, for the public checkout's budgets).
    trustProxy: platform.config.TRUST_PROXY,
    // A client that trickles its request (slowloris) is cut off instead of holding a socket forever.
    requestTimeout: platform.config.HTTP_REQUEST_TIMEOUT_MS,
    genReqId: requestIdFor,
    forceCloseConnections: 'idle',
    // Refused in the envelope instead (closing-refusal.ts).
    return503OnClosing: false,
    clientErrorHandler: clientErrorHandler(platform.logger),
    // A URL Fastify cannot decode never reaches the router nor any hook: answer it in the envelope
    // too, with the CORS headers the hook would have set.
    frameworkErrors: (error, request, reply) => {
      setCorsHeaders(origins, request, reply);
      sendError(request, reply, new KeelError('BAD_REQUEST', `Malformed request: ${error.message}`));
    },
  });

  app.server.headersTimeout = platform.config.HTTP_HEADERS_TIMEOUT_MS;
  // First: every answer, a refusal of any hook after it (503 closing, 414, 401, 429) included,
  // carries the CORS headers a page needs to read it.
  registerCors(app, origins);
  registerClosingRefusal(app);
  app.setErrorHandler(errorHandler(platform.logger));
  app.setNotFoundHandler((request, reply) => sendError(request, reply, new KeelError('NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`)));
  registerProtocolChecks(app);
  registerTextCheck(app, platform.config.BODY_MAX_DEPTH);
  registerGuards(app, host, platform);

  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions?.url ?? 'unmatched';
    platform.metrics.httpRequests.inc({ host, method: request.method, route, status: String(reply.statusCode) });
    platform.metrics.httpDuration.observe({ host, method: request.method, route }, reply.elapsedTime / 1000);
    // The route pattern, never the URL: query strings may carry things like a caller's RPC URL.
    if (platform.logger.isLevelEnabled('debug')) {
      platform.logger.debug({ requestId: request.id, host, method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
    }
    done();
  });

  const contextFor = (principal: Principal, requestId: string): GraphQLContext => ({ host, principal, requestId, services });

  const { config } = platform;
  const documentRules = [...queryLimitRules({ maxDepth: config.GRAPHQL_MAX_DEPTH, maxAliases: config.GRAPHQL_MAX_ALIASES, maxCost: config.GRAPHQL_MAX_COST }), storableLiterals(config.BODY_MAX_DEPTH)];
  const validateDocument = validateWithLimits(documentRules);
  const persistedQueries = new PersistedQueryStore(platform.redis, {
    prefix: `${config.REDIS_PREFIX}${host}:apq:`,
    ttlSeconds: config.APQ_TTL_SECONDS,
    localEntries: config.APQ_LOCAL_ENTRIES,
    redisTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
    maxDocumentBytes: config.APQ_MAX_DOCUMENT_BYTES,
    maxDocumentsPerOrganization: config.APQ_MAX_DOCUMENTS_PER_ORGANIZATION,
    maxBytesPerOrganization: config.APQ_MAX_BYTES_PER_ORGANIZATION,
  });
  /**
   * Documents sent with their hash, by request (never by its id, which a client may choose):
   * registered once Apollo has validated them.
   */
  const registrations = new WeakMap<FastifyRequest, { hash: string; document: string }>();
  /** What a document of several mutations counts for (requestsOf), spent once its Idempotency-Key is claimed. */
  const mutationRequests = new WeakMap<FastifyRequest, number>();
  const apollo = new ApolloServer<HttpGraphQLContext>({
    schema,
    // Automatic persisted queries are Keel's own (each organisation's documents, within quotas):
    // the /graphql route resolves a hash to its document before Apollo sees the request.
    persistedQueries: false,
    // A browser cannot send apiKey or Authorization cross-site without a CORS preflight, and every
    // authenticated request carries one of them: that is the CSRF protection (also for GET).
    csrfPrevention: { requestHeaders: ['apikey', 'authorization', 'x-apollo-operation-name', 'apollo-require-preflight'] },
    validationRules: documentRules,
    // Stops parsing an oversized document early; over graphql-ws the same count is a validation rule.
    parseOptions: { maxTokens: MAX_TOKENS },
    introspection: config.GRAPHQL_INTROSPECTION,
    includeStacktraceInErrorResponses: false,
    // Keel drains and stops on SIGTERM itself (src/cli); Apollo must not race it with its own handler.
    stopOnTerminationSignals: false,
    plugins: [
      ApolloServerPluginLandingPageDisabled(),
      {
        async requestDidStart() {
          return {
            // A document sent with its hash is kept only once it has validated (limits included).
            async didResolveOperation({ contextValue }) {
              const registration = registrations.get(contextValue[HTTP_REQUEST]);
              if (registration) await persistedQueries.register(contextValue.principal.organizationId, registration.hash, registration.document);
            },
            // A transient refusal (NOT_LEADER) tells when to retry, as REST does. An error REST would
            // answer 5xx is a server error here too, though the answer is 200: its Idempotency-Key's
            // claim is released with the results it recorded, not stored (guards.ts).
            async didEncounterErrors({ errors, response, contextValue }) {
              const keel = errors.map((e) => toKeelError(e));
              const retryAfter = keel.map((e) => e.retryAfterSeconds).find((s) => s !== undefined);
              if (retryAfter !== undefined) response.http.headers.set('retry-after', String(retryAfter));
              if (keel.some((e) => e.status >= 500)) contextValue[HTTP_REQUEST].answeredServerError = true;
            },
            async willSendResponse({ response, contextValue }) {
              if (response.body.kind !== 'single' || !response.body.singleResult.errors) return;
              response.body.singleResult.errors = response.body.singleResult.errors.map((e) => {
                const ext = e.extensions ?? {};
                return { ...e, extensions: { ...ext, requestId: contextValue.requestId } };
              });
            },
          };
        },
      },
    ],
    formatError: (formatted, error) => {
      // The APQ protocol's own codes: clients look for them to send the full document.
      const code = formatted.extensions?.code;
      if (code === 'PERSISTED_QUERY_NOT_FOUND' || code === 'PERSISTED_QUERY_NOT_SUPPORTED') return { message: formatted.message, extensions: { code } };
      const keel = toKeelError(error);
      if (keel.code === 'INTERNAL_ERROR') platform.logger.error({ err: error }, 'graphql resolver error');
      const { requestId: _omit, ...extensions } = errorExtensions(keel, '');
      return { message: keel.code === 'INTERNAL_ERROR' ? keel.message : formatted.message, locations: formatted.locations, path: formatted.path, extensions };
    },
  });
  await apollo.start();
  const graphqlHandler = fastifyApolloHandler(apollo, {
    context: async (request: FastifyRequest): Promise<HttpGraphQLContext> => ({ ...contextFor(request.principal!, request.id), [HTTP_REQUEST]: request }),
  });
  // In sandbox (GRAPHQL_EXPLORER), a browser opening /graphql gets the explorer page; GraphQL clients are answered as before.
  const explorerPage = config.GRAPHQL_EXPLORER ? registerGraphqlExplorer(app, host) : undefined;
  const isExplorerPage = (request: FastifyRequest) => explorerPage !== undefined && isExplorerPageRequest(request);
  app.route<{ Reply: string }>({
    url: '/graphql',
    method: ['GET', 'POST'],
    // Authorisation before validation: the document's root fields are checked against the key
    // before the body's text check, the idempotency claim or any variable coercion. A document of
    // several mutations spends the rest of what it counts for once its key is claimed (preHandler),
    // before any runs: a replay of the key's answer runs nothing and spends only its arrival.
    // A persisted query is resolved here to the caller's organisation's document for its hash (an
    // unknown hash is answered PERSISTED_QUERY_NOT_FOUND) and authorised on that document; Apollo
    // then runs it as a plain request. Over GET Apollo runs queries only, never mutations.
    preValidation: async (request: FastifyRequest, reply: FastifyReply) => {
      if (isExplorerPage(request)) return;
      const params = (request.method === 'GET' ? graphqlGetParams(request) : request.body) as GraphQLParams | undefined;
      const asked = persistedQueryAsk(params);
      let query = params?.query;
      if (asked) {
        if (asked.document === undefined) {
          query = await persistedQueries.document(request.principal!.organizationId, asked.hash);
          if (query === undefined) return sendPersistedQueryNotFound(reply);
        } else {
          registrations.set(request, { hash: asked.hash, document: asked.document });
        }
        asPlainRequest(request, params!, query as string);
      }
      const document = authorizeDocumentText(contextFor(request.principal!, request.id), schema, query, params?.operationName, variablesOf(params?.variables));
      const requests = requestsOf(document, params?.operationName);
      // A document that does not validate (over the query limits too), or a mutation over GET, runs
      // nothing: Apollo answers 400 or 405, and only its arrival counts.
      if (requests > 1 && request.method === 'POST' && !validateDocument(schema, document!).length) mutationRequests.set(request, requests);
    },
    // After the guards' idempotency claim, which answers a replay itself (this hook then does not
    // run). A 429 here carries Retry-After, so the claim is released, not kept (guards.ts).
    preHandler: async (request: FastifyRequest, reply: FastifyReply) => {
      const requests = mutationRequests.get(request);
      if (requests !== undefined) await spendFurtherRequests(platform, request, reply, requests);
    },
    handler: (request, reply) => {
      if (!isExplorerPage(request)) return graphqlHandler.call(app, request, reply);
      explorerPage!(request, reply);
    },
  });

  const compiledRoutes = registerRestRoutes(app, schema, HOST_API[host].routes, (request) => contextFor(request.principal!, request.id));
  let openapi: Record<string, unknown> | undefined;
  app.get('/v1/openapi.json', async () => {
    openapi ??= hostOpenApi(HOST_API[host], schema, compiledRoutes(), MAX_URL_LENGTH);
    return openapi;
  });

  if (opts.publicRoutes) {
    const { register, budgets } = opts.publicRoutes;
    await app.register(async (scope) => {
      scope.addHook('onRoute', (route) => {
        route.config = { ...(route.config as object), public: true } as typeof route.config;
      });
      scope.addHook('onRequest', async (request, reply) => setRateLimitHeaders(reply, await budgets.spend(request)));
      register(scope);
    });
  }

  app.get('/health', async () => ({ status: 'ok' }));
  app.get('/ready', async (_request, reply) => {
    const { ready, postgres, redis } = await checkReadiness(platform.db, platform.redis, { postgresMs: config.DB_ACQUIRE_TIMEOUT_MS, redisMs: config.REDIS_COMMAND_TIMEOUT_MS });
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', postgres, redis });
  });
  registerMetricsRoute(app, platform.metrics, config.METRICS_TOKEN);
  registerConsoleRoute(app, host);
  registerApiReference(app, host);

  attachGraphqlWs(app, { host, schema, platform, origins, validate: validateDocument, contextFor });
  app.addHook('onClose', async () => {
    await apollo.stop();
  });
  return app;
}

export async function listen(app: FastifyInstance, hostname: string, port: number): Promise<RunningHost> {
  await app.listen({ host: hostname, port });
  const address = app.server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shown = hostname === '0.0.0.0' ? '127.0.0.1' : hostname;
  const close = async () => {
    // Keep-alive connections that served a request during the drain would hold close() open
    // until their idle timeout; drop each as soon as it is idle.
    const reaper = setInterval(() => app.server.closeIdleConnections(), 50);
    try {
      await app.close();
    } finally {
      clearInterval(reaper);
    }
  };
  return { app, url: `http://${shown}:${actualPort}`, close };
}

/** The APQ protocol's answer to a hash the organisation has no document for: the client then sends the document. */
function sendPersistedQueryNotFound(reply: FastifyReply): FastifyReply {
  return reply
    .code(200)
    .header('cache-control', 'private, no-cache, must-revalidate')
    .type('application/json; charset=utf-8')
    .send({ errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] });
}

/**
 * Rewrites a persisted query's request as the plain GraphQL request it stands for (the document in
 * `query`, `persistedQuery` dropped from the extensions), where Apollo reads it: the JSON body of a
 * POST, the URL's query string of a GET (the route is already matched, so only Apollo reads it).
 */
function asPlainRequest(request: FastifyRequest, params: GraphQLParams, query: string): void {
  const extensions = withoutPersistedQuery(params.extensions);
  if (request.method !== 'GET') {
    const { extensions: _replaced, ...rest } = params;
    request.body = extensions === undefined ? { ...rest, query } : { ...rest, query, extensions };
    return;
  }
  // Up to a fragment, as the check read it (graphql-get-params.ts): what is rewritten is what was authorised.
  const url = (request.raw.url ?? '/graphql').split('#')[0];
  const q = url.indexOf('?');
  const search = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
  search.set('query', query);
  if (typeof extensions === 'string') search.set('extensions', extensions);
  else search.delete('extensions');
  request.raw.url = `${q === -1 ? url : url.slice(0, q)}?${search}`;
}

/** GraphQL over GET sends its variables as JSON text. */
function variablesOf(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}
