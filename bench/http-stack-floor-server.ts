import 'reflect-metadata';
import Fastify, { FastifyInstance } from 'fastify';
import { parse } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { Pool } from 'pg';
import { Args, buildSchema, Ctx, Query, Resolver } from 'type-graphql';
import { ApiKeyPage } from '../src/modules/api-keys/api-key.types';
import { PageArgs } from '../src/graphql-kit/types/page';
import { connectRedis } from '../src/platform/redis';
import { RateLimiter, RateLimitState } from '../src/platform/rate-limit';
import { serveJson } from './support';
import { setRateLimitHeaders } from '../src/server/rate-limit-headers';
import { envelope } from '../rest-compat/envelope';
import { errorEnvelope } from '../src/server/error-handler';

/**
 * The http benchmark's third yardstick: the least the design card's stack does for the same read,
 * with none of Keel's own layers. Fastify with one route; Keel's Redis rate limit and its headers; a
 * type-graphql schema with Keel's own `ApiKey` page type and one resolver running the same SQL as
 * `GET /v1/api-keys` as a prepared statement on a bare pg pool; the query document written once and
 * compiled once by graphql-jit, as the REST shim runs its GET rows; the spec's list envelope. No
 * authentication (the organisation is fixed), argument validation, request hooks, unit of work,
 * idempotency, metrics or error mapping: everything Keel adds to that is what separates the two.
 */
const LIST_KEYS = {
  name: 'floor.api_keys.list',
  text: `SELECT id, organization_id AS "organizationId", name, host, environment, scopes, tier, prefix, last_rotated_at AS "lastRotatedAt",
     revoked_at AS "revokedAt", agent_id AS "agentId", created_at AS "createdAt", updated_at AS "updatedAt"
   FROM api_keys WHERE organization_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
};

const QUERY = `query ($limit: Int!, $offset: Int!) {
  apiKeys(limit: $limit, offset: $offset) {
    items { id organizationId name host environment scopes tier prefix status lastRotatedAt revokedAt agentId createdAt updatedAt }
    total hasMore limit offset
  }
}`;

export interface FloorContext {
  pool: Pool;
  organizationId: string;
}

@Resolver()
class FloorApiKeysResolver {
  @Query(() => ApiKeyPage)
  async apiKeys(@Args() page: PageArgs, @Ctx() ctx: FloorContext): Promise<ApiKeyPage> {
    const { rows } = await ctx.pool.query({ ...LIST_KEYS, values: [ctx.organizationId, page.limit, page.offset] });
    const items = rows.map((r) => Object.assign(r, { status: r.revokedAt ? 'REVOKED' : 'ACTIVE' }));
    return { items, total: page.offset + items.length, hasMore: false, limit: page.limit, offset: page.offset };
  }
}

/** The floor's read: the rate limit spent, then the compiled query; its rate-limit state and envelope. */
export async function stackFloorRead(context: FloorContext, rateLimiter: RateLimiter): Promise<() => Promise<{ rateLimit: RateLimitState; body: unknown }>> {
  // No field of the floor's is @Authorized; the checker is there because Keel's own types share type-graphql's metadata in process.
  const schema = await buildSchema({ resolvers: [FloorApiKeysResolver], validate: false, authChecker: () => true });
  const compiled = compileQuery(schema, parse(QUERY));
  if (!isCompiledQuery(compiled)) throw new Error(`the floor's query does not compile: ${JSON.stringify(compiled)}`);
  return async () => {
    const rateLimit = await rateLimiter.consume('Business', 'bench');
    const result = await compiled.query(undefined, context, { limit: 50, offset: 0 });
    if (result.errors?.length) throw result.errors[0];
    return { rateLimit, body: envelope('coreList', (result.data as { apiKeys: unknown }).apiKeys) };
  };
}

/**
 * The floor as a Fastify app (GET / answers the read), for a socket or for inject. Any other path is
 * the floor of an authenticated request that finds no route: the rate limit spent and its headers,
 * then the spec's error envelope with the request id (no authentication: Keel's, from its per-node
 * cache, is a few microseconds, `request-cost`'s `authenticateOnly`).
 */
export async function stackFloorApp(context: FloorContext, rateLimiter: RateLimiter): Promise<FastifyInstance> {
  const read = await stackFloorRead(context, rateLimiter);
  const app = Fastify();
  app.get('/ready', async () => 'ok');
  app.get('/', async (_request, reply) => {
    const { rateLimit, body } = await read();
    setRateLimitHeaders(reply, rateLimit);
    return body;
  });
  app.setNotFoundHandler(async (request, reply) => {
    setRateLimitHeaders(reply, await rateLimiter.consume('Business', 'bench'));
    reply.header('X-Request-Id', request.id);
    const message = `No route ${request.method} ${request.url.split('?')[0]}`;
    return reply.code(404).send(errorEnvelope({ code: 'NOT_FOUND', message }, request.id));
  });
  return app;
}

/** STACK_FLOOR_HTTP=node serves the same read from bare node:http instead, to tell Fastify's share from GraphQL's. */
async function main(): Promise<void> {
  const context: FloorContext = { pool: new Pool({ connectionString: process.env.DATABASE_URL, max: 20 }), organizationId: process.env.ORG_ID! };
  const rateLimiter = new RateLimiter(await connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), 'keelbench:stackfloor:', 100_000, 250);
  const port = Number(process.env.PORT);
  if (process.env.STACK_FLOOR_HTTP === 'node') {
    const read = await stackFloorRead(context, rateLimiter);
    serveJson(port, async () => ({ status: 200, body: (await read()).body }));
    return;
  }
  const app = await stackFloorApp(context, rateLimiter);
  await app.listen({ port, host: '127.0.0.1' });
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

if (require.main === module) void main();
