import type { Knex } from 'knex';
import type { RedisClient } from './redis';
import { withinMs } from './time-bound';

export interface Readiness {
  ready: boolean;
  postgres: 'ok' | 'unavailable';
  redis: 'ok' | 'unavailable';
}

/** Whether PostgreSQL and Redis answer, each within its bound, so `/ready` never hangs on a paused one. */
export async function checkReadiness(db: Knex, redis: RedisClient, bounds: { postgresMs: number; redisMs: number }): Promise<Readiness> {
  const [postgres, redisCheck] = await Promise.allSettled([withinMs(db.raw('SELECT 1'), bounds.postgresMs, 'PostgreSQL'), withinMs(redis.ping(), bounds.redisMs, 'Redis')]);
  const state = (check: PromiseSettledResult<unknown>) => (check.status === 'fulfilled' ? 'ok' : 'unavailable') as Readiness['postgres'];
  return { ready: postgres.status === 'fulfilled' && redisCheck.status === 'fulfilled', postgres: state(postgres), redis: state(redisCheck) };
}
