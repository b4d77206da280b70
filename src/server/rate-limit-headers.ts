import type { FastifyReply } from 'fastify';
import { rateLimitHeaders, type RateLimitState } from '../platform/rate-limit';

export function setRateLimitHeaders(reply: FastifyReply, state: RateLimitState): void {
  reply.headers(rateLimitHeaders(state));
}
