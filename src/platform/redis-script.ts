import { createHash } from 'node:crypto';
import type { RedisClient } from './redis';

/**
 * A Lua script run by its SHA (EVALSHA): the script itself is sent only the first time a Redis
 * server sees it (or after SCRIPT FLUSH or a restart), when EVALSHA answers NOSCRIPT.
 */
export class RedisScript {
  private readonly sha: string;

  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  run(redis: RedisClient, keys: string[], args: string[]): Promise<unknown> {
    const options = { keys, arguments: args };
    return redis.evalSha(this.sha, options).catch((error: unknown) => {
      if (error instanceof Error && error.message.startsWith('NOSCRIPT')) return redis.eval(this.source, options);
      throw error;
    });
  }
}
