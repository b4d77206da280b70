import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import Fastify, { FastifyInstance } from 'fastify';
import { parse } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { Pool } from 'pg';
import { Arg, buildSchema, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import { OrderObject, PlaceOrderInputType } from '../src/modules/orders/order.types';
import { Order, OrderSide, OrderStatus, OrderType, TimeInForce } from '../src/modules/orders/order.domain';
import { connectRedis } from '../src/platform/redis';
import { RateLimiter } from '../src/platform/rate-limit';
import { setRateLimitHeaders } from '../src/server/rate-limit-headers';
import { envelope } from '../rest-compat/envelope';
import { groupCommittedOrders } from './group-commit';

/**
 * The orders benchmark's second yardstick: the least the design card's stack does for a placement,
 * with none of Keel's own layers. Fastify parsing the JSON body; Keel's Redis rate limit and its
 * headers; a type-graphql mutation with Keel's own `PlaceOrderInput` and `Order` types, its document
 * compiled once by graphql-jit as the REST shim runs a mutation row; the order group-committed
 * as one row (the first yardstick's write); the spec's single envelope. No authentication, argument
 * validation, matching, balances, trades, ledger or idempotency: what Keel adds to that is its own.
 */
const MUTATION = parse(`mutation ($input: PlaceOrderInput!) {
  placeOrder(input: $input) {
    id clientOrderId marketId market walletId side type timeInForce postOnly price quantity filledQuantity remainingQuantity
    averagePrice fee status statusReason sequence createdAt updatedAt
  }
}`);

/** What the floor's mutation does with an order: the stack floor stores it as one row, the stack work floor does the work floor's durable work, the service floor places it through Keel's OrderService. */
export type FloorPlacement = (input: PlaceOrderInputType) => Promise<Order | OrderObject>;

interface FloorContext {
  place: FloorPlacement;
}

@Resolver()
class FloorOrdersResolver {
  // graphql-js requires a query type.
  @Query(() => Boolean)
  ready(): boolean {
    return true;
  }

  @Mutation(() => OrderObject)
  placeOrder(@Arg('input') input: PlaceOrderInputType, @Ctx() ctx: FloorContext): Promise<Order | OrderObject> {
    return ctx.place(input);
  }
}

/** The stack floor's placement: the order group-committed as one row, answered as if it rested. */
export function storedAsOneRow(store: (body: unknown) => Promise<string>): FloorPlacement {
  return answeredAsResting(async (input) => ({ id: randomUUID(), sequence: await store(input) }));
}

/** A floor's placement: `commit` makes the order durable and gives its id and sequence; the answer is built as if the order rested. */
export function answeredAsResting(commit: (input: PlaceOrderInputType) => Promise<{ id: string; sequence: string }>): FloorPlacement {
  return async (input) => {
    const { id, sequence } = await commit(input);
    const now = new Date();
    return {
      id,
      clientOrderId: input.clientOrderId ?? null,
      marketId: randomUUID(),
      market: input.market,
      walletId: input.walletId,
      side: input.side as OrderSide,
      type: (input.type ?? OrderType.LIMIT) as OrderType,
      timeInForce: (input.timeInForce ?? TimeInForce.GTC) as TimeInForce,
      postOnly: input.postOnly ?? false,
      price: input.price ?? null,
      quantity: input.quantity,
      filledQuantity: '0',
      remainingQuantity: input.quantity,
      averagePrice: null,
      fee: '0',
      status: OrderStatus.OPEN,
      statusReason: null,
      sequence,
      createdAt: now,
      updatedAt: now,
    };
  };
}

/** The floor as a Fastify app (POST / places), for a socket or for inject. */
export async function ordersStackFloorApp(place: FloorPlacement, rateLimiter: RateLimiter): Promise<FastifyInstance> {
  // No field of the floor's is @Authorized; the checker is there because Keel's own types share type-graphql's metadata in process.
  const schema = await buildSchema({ resolvers: [FloorOrdersResolver], validate: false, authChecker: () => true });
  const compiled = compileQuery(schema, MUTATION);
  if (!isCompiledQuery(compiled)) throw new Error(`the floor's mutation does not compile: ${JSON.stringify(compiled)}`);
  const context: FloorContext = { place };
  const app = Fastify();
  app.get('/ready', async () => 'ok');
  app.post('/', async (request, reply) => {
    setRateLimitHeaders(reply, await rateLimiter.consume('Business', 'bench'));
    const result = await compiled.query(undefined, context, { input: request.body });
    if (result.errors?.length) throw result.errors[0];
    return reply.code(201).send(envelope('single', (result.data as { placeOrder: unknown }).placeOrder));
  });
  return app;
}

async function main(): Promise<void> {
  const store = await groupCommittedOrders(new Pool({ connectionString: process.env.DATABASE_URL, max: 20 }));
  const rateLimiter = new RateLimiter(await connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), 'keelbench:stackfloor:', 100_000, 250);
  const app = await ordersStackFloorApp(storedAsOneRow(store), rateLimiter);
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

if (require.main === module) void main();
