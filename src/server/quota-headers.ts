import type { FastifyReply } from 'fastify';
import type { QuotaState } from '../platform/quota/monthly-quota';

/** The organisation's monthly quota: its size, what is left of it, and when it resets (UTC epoch seconds). */
export function setQuotaHeaders(reply: FastifyReply, state: QuotaState): void {
  reply.header('X-Quota-Limit', state.limit);
  reply.header('X-Quota-Remaining', state.remaining);
  reply.header('X-Quota-Reset', state.reset);
}
