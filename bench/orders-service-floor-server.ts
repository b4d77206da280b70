import 'reflect-metadata';
import { RateLimiter } from '../src/platform/rate-limit';
import { OrderService } from '../src/modules/orders/order.service';
import { openServices } from '../src/cli/with-services';
import type { LedgerService } from '../src/modules/ledger/ledger.service';
import type { MarketService } from '../src/modules/markets/market.service';
import type { UnitOfWork } from '../src/platform/db/unit-of-work';
import type { Knex } from 'knex';
import type { FastifyInstance } from 'fastify';
import { ordersStackFloorApp } from './orders-stack-floor-server';

/**
 * The orders benchmark's third yardstick: the stack floor (Fastify, the Redis rate limit, the
 * type-graphql mutation compiled by graphql-jit, the envelope) with Keel's own order service behind
 * it in place of the one stored row, on the benchmark Keel's database and market: the checks, the
 * matching engine, the group commit of orders, trades, ledger moves and balances, and the answer's
 * view. What it lacks beside Keel is Keel's request path: authentication, scopes, the REST shim's
 * routing and validation, idempotency, request context, logging and metrics. So the gap between
 * the stack floor and this one is what placing an order costs in Keel's data model; the gap between
 * this one and Keel is Keel's request path.
 * Its order service is a sole node's (no shard lease), so the benchmark gives it a market of its
 * own: on a shared one, each of it and Keel would find the market's sequence moved by the other's
 * run and reload the whole book inside its next measured run.
 */
export function ordersServiceFloorApp(
  keel: { db: Knex; markets: MarketService; ledger: LedgerService; unitOfWork: UnitOfWork },
  organizationId: string,
  rateLimiter: RateLimiter,
): Promise<FastifyInstance> {
  const orders = new OrderService(keel.db, keel.markets, keel.ledger, keel.unitOfWork);
  return ordersStackFloorApp((input) => orders.place(organizationId, input), rateLimiter);
}

async function main(): Promise<void> {
  const { services, platform, close } = await openServices(process.env, 'warn');
  const rateLimiter = new RateLimiter(platform.redis, 'keelbench:servicefloor:', 100_000, 250);
  const app = await ordersServiceFloorApp({ db: platform.db, markets: services.markets, ledger: services.ledger, unitOfWork: platform.unitOfWork }, process.env.ORGANIZATION_ID!, rateLimiter);
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  process.on('SIGTERM', () =>
    void app
      .close()
      .then(close)
      .finally(() => process.exit(0)),
  );
}

if (require.main === module) void main();
