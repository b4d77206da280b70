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

/**
 * Whether PostgreSQL answered and refused the login: a wrong password or role (28P01, 28000), or a
 * password asked for and none in DATABASE_URL (node-postgres says so before sending anything). A
 * Debian cluster asks for passwords over TCP unless pg_hba.conf trusts the address.
 */
export function loginRefused(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (code === '28P01' || code === '28000') return true;
  const message = error instanceof Error ? error.message : '';
  return /client password must be a string|password authentication failed|no pg_hba\.conf entry/i.test(message);
}

/** What to do when PostgreSQL refuses Keel's login. */
export const HOW_TO_LOG_IN =
  "Put the role's password in DATABASE_URL (postgres://user:password@host:port/database), or let the role in without one in pg_hba.conf " +
  '(a local sandbox: `host all all 127.0.0.1/32 trust` in /etc/postgresql/<version>/main/pg_hba.conf, then `pg_ctlcluster <version> main reload`).';

/** A start-up failure that names the missing service and how to start it; its message is the whole story. */
export class DependencyUnreachable extends Error {
  constructor(dependency: Dependency, url: string, cause: unknown) {
    super(
      dependency === 'PostgreSQL' && loginRefused(cause)
        ? `Keel cannot start: PostgreSQL at ${endpoint(url)} refuses the login (${reason(cause)}). ${HOW_TO_LOG_IN}`
        : `Keel cannot start: ${dependency} is not reachable at ${endpoint(url)} (${reason(cause)}). ${howToStart(dependency)}`,
    );
    this.name = 'DependencyUnreachable';
  }
}

/** Runs the first contact with a dependency; a connection failure becomes DependencyUnreachable. */
export async function reach<T>(dependency: Dependency, url: string, connect: () => Promise<T>): Promise<T> {
  try {
    return await connect();
  } catch (error) {
    throw isConnectionFailure(error) || (dependency === 'PostgreSQL' && loginRefused(error)) ? new DependencyUnreachable(dependency, url, error) : error;
  }
}
