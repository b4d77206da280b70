import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../platform/metrics';
import { KeelError } from '../platform/errors';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Prometheus metrics at /metrics; with a token set, only for `Authorization: Bearer <token>` (compared in constant time). */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  const expected = token === undefined ? undefined : digest(`Bearer ${token}`);
  app.get('/metrics', async (request, reply) => {
    if (expected && !timingSafeEqual(digest(request.headers.authorization ?? ''), expected)) {
      throw KeelError.unauthorized('/metrics needs Authorization: Bearer <METRICS_TOKEN>');
    }
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}
