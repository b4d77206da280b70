import type { FastifyReply } from 'fastify';
import type { RateLimitState } from '../platform/rate-limit';

export function setRateLimitHeaders(reply: FastifyReply, state: RateLimitState): void {
  reply.header('X-RateLimit-Limit', state.limit);
  reply.header('X-RateLimit-Remaining', state.remaining);
  reply.header('X-RateLimit-Reset', state.reset);
}
