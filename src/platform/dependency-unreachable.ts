import { isConnectionFailure } from './unavailable';

export type Dependency = 'PostgreSQL' | 'Redis';

/** How to start each dependency without Docker, as the README's Quick start and docs/operating-keel.md give it (Debian packages). */
const START_WITHOUT_DOCKER: Record<Dependency, string> = {
  PostgreSQL: 'pg_ctlcluster <version> main start',
  Redis: 'redis-server --daemonize yes',
};

/** host:port only: a URL may carry a password. */
export function endpoint(url: string): string {
  try {
    const { hostname, port } = new URL(url);
    return `${hostname}:${port || (url.startsWith('redis') ? '6379' : '5432')}`;
  } catch {
    return 'the configured address';
  }
}

/** The error code of a failed connection (ECONNREFUSED, …), else its message. */
export function reason(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  return error instanceof Error ? error.message : String(error);
}

/** What to run when a dependency is not there. */
export function howToStart(dependency: Dependency): string {
  return `Start it with \`docker compose up -d postgres redis\`, or on Debian \`${START_WITHOUT_DOCKER[dependency]}\`.`;
}

/** A start-up failure that names the missing service and how to start it; its message is the whole story. */
export class DependencyUnreachable extends Error {
  constructor(dependency: Dependency, url: string, cause: unknown) {
    super(`Keel cannot start: ${dependency} is not reachable at ${endpoint(url)} (${reason(cause)}). ${howToStart(dependency)}`);
    this.name = 'DependencyUnreachable';
  }
}

/** Runs the first contact with a dependency; a connection failure becomes DependencyUnreachable. */
export async function reach<T>(dependency: Dependency, url: string, connect: () => Promise<T>): Promise<T> {
  try {
    return await connect();
  } catch (error) {
    throw isConnectionFailure(error) ? new DependencyUnreachable(dependency, url, error) : error;
  }
}
