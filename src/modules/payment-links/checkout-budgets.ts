import type { FastifyRequest } from 'fastify';
import { clientKey } from '../../platform/client-address';
import { ClientRateLimiter, RateLimitState } from '../../platform/rate-limit';
import type { RedisClient } from '../../platform/redis';

/**
 * What a public checkout route spends besides its client's budget: `opening` a session spends, once
 * the session is known to open (admitSession), the client's share of the link and the link's
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
  /** Sessions one client opens on one link per minute; at most half of `sessionsPerLink` (at least 1) is used. */
  sessionsPerClientPerLink: number;
  /** Session reads per client per minute, apart from its budget. */
  sessionReadsPerClient: number;
}

/**
 * The public checkout's budgets, counted in Redis like the API keys' (ClientRateLimiter):
 * - every client (its address as `request.ip` gives it, behind TRUST_PROXY the payer's; an IPv6
 *   client by its /64) has one budget for the page, the link's terms and opening sessions;
 * - every link has a budget of sessions opened, so a link flooded with sessions refuses new ones
 *   while the others (and that link's open sessions) go on. Only sessions that open spend it (a
 *   refused body spends none), and each client has a share of it, at most half, so no one client
 *   can use up a link's sessions and keep its other payers out;
 * - reading a session is counted apart, so a page polling once a second never uses up the budget its
 *   payer needs to open a session or reload.
 * The host spends the client's budget (or read allowance) before each public request
 * (createHost's publicRoutes.budgets); opening a session spends the link's as it opens (admitSession).
 */
export class CheckoutBudgets {
  private readonly clients: ClientRateLimiter;
  private readonly links: ClientRateLimiter;
  private readonly clientLinks: ClientRateLimiter;
  private readonly reads: ClientRateLimiter;
  /** What each opening request spent of its client's budget, so its headers name the tightest budget it spent. */
  private readonly spentByOpening = new WeakMap<FastifyRequest, RateLimitState>();

  constructor(redis: RedisClient, prefix: string, limits: CheckoutBudgetLimits, redisTimeoutMs: number) {
    const clientShare = Math.max(1, Math.min(limits.sessionsPerClientPerLink, Math.floor(limits.sessionsPerLink / 2)));
    this.clients = new ClientRateLimiter(redis, prefix, 'checkout', limits.perClient, redisTimeoutMs);
    this.links = new ClientRateLimiter(redis, prefix, 'checkout-link', limits.sessionsPerLink, redisTimeoutMs);
    this.clientLinks = new ClientRateLimiter(redis, prefix, 'checkout-client-link', clientShare, redisTimeoutMs);
    this.reads = new ClientRateLimiter(redis, prefix, 'checkout-read', limits.sessionReadsPerClient, redisTimeoutMs);
  }

  async spend(request: FastifyRequest): Promise<RateLimitState> {
    const client = clientKey(request.ip);
    const kind = request.routeOptions.config?.checkoutBudget;
    if (kind === 'reading') return this.reads.consume(client);
    const own = await this.clients.consume(client);
    if (kind === 'opening') this.spentByOpening.set(request, own);
    return own;
  }

  /**
   * Spends a session about to open on the link the request names: the client's share of the link
   * first (a client over it spends nothing of the link's), then the link's. Returns the tightest of
   * the request's budgets; 429 RATE_LIMIT_EXCEEDED when either is used up.
   */
  async admitSession(request: FastifyRequest): Promise<RateLimitState> {
    const client = clientKey(request.ip);
    const slug = String((request.params as { slug?: unknown }).slug ?? '').toLowerCase().slice(0, 100);
    const states = [await this.clientLinks.consume(`${slug}:${client}`), await this.links.consume(slug)];
    const own = this.spentByOpening.get(request);
    if (own) states.push(own);
    return states.reduce((tightest, s) => (s.remaining < tightest.remaining ? s : tightest));
  }
}
