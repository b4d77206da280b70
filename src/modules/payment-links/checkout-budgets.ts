import type { FastifyRequest } from 'fastify';
import { clientKey } from '../../platform/client-address';
import { ClientRateLimiter, RateLimitState } from '../../platform/rate-limit';
import type { RedisClient } from '../../platform/redis';

/**
 * What a public checkout route spends besides its client's budget: `opening` a session also spends its link's
 * budget; `reading` a session (the page's polling, the QR code) spends the client's read allowance
 * instead of its budget. Routes without one spend the client's budget.
 */
export type CheckoutBudgetKind = 'opening' | 'reading';

declare module 'fastify' {
  interface FastifyContextConfig {
    checkoutBudget?: CheckoutBudgetKind;
  }
}

export interface CheckoutBudgetLimits {
  /** Requests per client (an IPv6 client: per /64) per minute. */
  perClient: number;
  /** Sessions one link opens per minute, all payers together. */
  sessionsPerLink: number;
  /** Session reads per client per minute, apart from its budget. */
  sessionReadsPerClient: number;
}

/**
 * The public checkout's budgets, counted in Redis like the API keys' (ClientRateLimiter):
 * - every client (its address as `request.ip` gives it, behind TRUST_PROXY the payer's; an IPv6
 *   client by its /64) has one budget for the page, the link's terms and opening sessions;
 * - every link has a budget of sessions opened, so a link flooded with sessions refuses new ones
 *   while the others (and that link's open sessions) go on;
 * - reading a session is counted apart, so a page polling once a second never uses up the budget its
 *   payer needs to open a session or reload.
 * The host spends them before each public request (createHost's publicRoutes.budgets).
 */
export class CheckoutBudgets {
  private readonly clients: ClientRateLimiter;
  private readonly links: ClientRateLimiter;
  private readonly reads: ClientRateLimiter;

  constructor(redis: RedisClient, prefix: string, limits: CheckoutBudgetLimits, redisTimeoutMs: number) {
    this.clients = new ClientRateLimiter(redis, prefix, 'checkout', limits.perClient, redisTimeoutMs);
    this.links = new ClientRateLimiter(redis, prefix, 'checkout-link', limits.sessionsPerLink, redisTimeoutMs);
    this.reads = new ClientRateLimiter(redis, prefix, 'checkout-read', limits.sessionReadsPerClient, redisTimeoutMs);
  }

  async spend(request: FastifyRequest): Promise<RateLimitState> {
    const client = clientKey(request.ip);
    const kind = request.routeOptions.config?.checkoutBudget;
    if (kind === 'reading') return this.reads.consume(client);
    const own = await this.clients.consume(client);
    if (kind !== 'opening') return own;
    const slug = String((request.params as { slug?: unknown }).slug ?? '').toLowerCase().slice(0, 100);
    const link = await this.links.consume(slug);
    return link.remaining < own.remaining ? link : own;
  }
}
