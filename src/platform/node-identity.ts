import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Client } from 'pg';
import type { Config } from './config';
import type { Logger } from './logger';
import { keptInDataFolder } from './data-folder';

/** This process's name in the order-book cluster, held for as long as the process lives. */
export interface NodeIdentity {
  readonly id: string;
  /** Where the id came from: KEEL_NODE_ID, the data folder's `node-id`, or (that one being held by another live process) hostname:pid. */
  readonly source: 'KEEL_NODE_ID' | 'data folder' | 'process';
  release(): Promise<void>;
}

/** Processes started in this one (tests run several Keels side by side): the second and later get a suffix. */
let keelsInProcess = 0;

/** An id no other process has: for a process that never leads a shard (the operator's command line) or cannot hold its stable one. */
export function processNodeId(): string {
  const n = ++keelsInProcess;
  return `${hostname()}:${process.pid}${n > 1 ? `:${n}` : ''}`;
}

const LOCK_SQL = `SELECT pg_try_advisory_lock(hashtextextended('keel.node:' || $1, 0)) AS held`;

/**
 * Claims this node's id: KEEL_NODE_ID, or the id kept in `<KEEL_DATA_DIR>/node-id` (made once), so
 * a node restarted on the same host and data folder takes its own shard leases back at once
 * instead of waiting out its predecessor's. One live process per id: the id is held by a
 * PostgreSQL session advisory lock, which a killed process's session gives up as soon as its
 * connection closes. A second process on the same data folder gets hostname:pid; a second process
 * with the same KEEL_NODE_ID is refused, since two leaders under one id would take each other's
 * shards in turn.
 */
export async function claimNodeIdentity(config: Pick<Config, 'KEEL_NODE_ID' | 'KEEL_DATA_DIR' | 'DATABASE_URL'>, logger: Logger): Promise<NodeIdentity> {
  const explicit = config.KEEL_NODE_ID;
  const id = explicit ?? keptInDataFolder(config.KEEL_DATA_DIR, 'node-id', () => `${hostname()}-${randomBytes(4).toString('hex')}`, 0o644).value;
  // A killed predecessor's lock goes within milliseconds. An explicit id waits longer before refusing
  // to start; a data-folder id still held after a second most likely belongs to a live sibling.
  const lock = await holdLock(config.DATABASE_URL, id, explicit ? 5_000 : 1_000, logger);
  if (lock) {
    let ended: Promise<void> | undefined;
    return { id, source: explicit ? 'KEEL_NODE_ID' : 'data folder', release: () => (ended ??= lock.end()) };
  }
  if (explicit) throw new Error(`KEEL_NODE_ID=${explicit} is held by another running Keel process on this database: give each process its own KEEL_NODE_ID`);
  const fallback = processNodeId();
  logger.warn({ nodeId: fallback, heldId: id, dataDir: config.KEEL_DATA_DIR }, 'the data folder’s node id is held by another running Keel process: this one runs as hostname:pid (give each process its own KEEL_DATA_DIR or KEEL_NODE_ID)');
  return { id: fallback, source: 'process', release: async () => undefined };
}

/**
 * A connection holding the id's advisory lock, or undefined when another session still holds it
 * after `waitMs` (a killed predecessor's session ends as soon as PostgreSQL reads its closed
 * socket, usually within milliseconds; keepalives bound it when the host itself is gone).
 */
async function holdLock(databaseUrl: string, id: string, waitMs: number, logger: Logger): Promise<Client | undefined> {
  const client = new Client({ connectionString: databaseUrl, keepAlive: true });
  await client.connect();
  try {
    await client.query('SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; SET tcp_keepalives_count = 3');
    const deadline = Date.now() + waitMs;
    while (!(await client.query<{ held: boolean }>(LOCK_SQL, [id])).rows[0].held) {
      if (Date.now() >= deadline) {
        await client.end();
        return undefined;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    await client.end().catch(() => undefined);
    throw e;
  }
  // The lock lives with this session. If PostgreSQL drops it, the fencing tokens still keep every
  // commit safe; the id is only no longer guarded against a second process claiming it.
  client.on('error', (e) => logger.warn({ nodeId: id, err: e }, 'the connection holding this node’s id was lost: the id is no longer reserved until restart'));
  return client;
}
