import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { Client } from 'pg';
import { Config } from '../platform/config';
import { createDb, readMigrationState } from '../platform/db/knex';
import { connectRedis } from '../platform/redis';
import { endpoint, HOW_TO_LOG_IN, howToStart, loginRefused, reason } from '../platform/dependency-unreachable';
import { keyId, parseMasterKey } from '../platform/crypto/secret-box';
import type { SealedColumn } from '../platform/crypto/reseal';
import { parseChainFamilies } from '../modules/chains/chain-config';
import { rpc } from '../platform/chain/json-rpc';
import { urlOrigin } from '../platform/net/rpc-url';
import { withinMs } from '../platform/time-bound';
import { SEALED_MNEMONICS } from '../modules/wallets/wallet-keys';
import { SEALED_WEBHOOK_SECRETS } from '../modules/webhooks/webhook-signing';

/** One finding of `keel doctor`: `fix` says what to do when it is not ok. */
export interface Check {
  check: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  fix?: string;
}

const ok = (check: string, detail: string): Check => ({ check, status: 'ok', detail });
const warn = (check: string, detail: string, fix: string): Check => ({ check, status: 'warn', detail, fix });
const fail = (check: string, detail: string, fix: string): Check => ({ check, status: 'fail', detail, fix });

const LABEL = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL' } as const;

/** One line per check: status, what was checked, what was found, and what to do about it. */
export function formatCheck(c: Check): string {
  return `${LABEL[c.status]} ${c.check}: ${c.detail}${c.fix ? `. Fix: ${c.fix}` : ''}`;
}

async function checkPostgres(config: Config): Promise<{ check: Check; reachable: boolean; databaseExists: boolean }> {
  const client = new Client({ connectionString: config.DATABASE_URL, connectionTimeoutMillis: config.STARTUP_CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined);
  const where = `${endpoint(config.DATABASE_URL)}, database ${new URL(config.DATABASE_URL).pathname.slice(1)}`;
  try {
    await client.connect();
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return { check: ok('PostgreSQL', `${where} (PostgreSQL ${rows[0].server_version})`), reachable: true, databaseExists: true };
  } catch (error) {
    // 3D000: the server answers but the database is not there yet.
    if ((error as { code?: string }).code === '3D000') {
      return { check: warn('PostgreSQL', `${where} does not exist yet`, '`npx keel migrate` (or `npx keel start`) creates it'), reachable: true, databaseExists: false };
    }
    if (loginRefused(error)) return { check: fail('PostgreSQL', `${where}: the server refuses the login (${reason(error)})`, HOW_TO_LOG_IN), reachable: false, databaseExists: false };
    return { check: fail('PostgreSQL', `${where}: not reachable (${reason(error)})`, howToStart('PostgreSQL')), reachable: false, databaseExists: false };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Reads the migration state without knex's migrator, which would create its own tables: a diagnostic creates nothing. */
async function checkMigrations(db: Knex): Promise<Check> {
  try {
    const { migrated, applied, pending, unknown } = await readMigrationState(db);
    // A database with migrations this build does not know: a newer Keel migrated it.
    if (unknown.length) return fail('migrations', `has migrations this build does not know (${unknown.join(', ')})`, 'run the Keel version that migrated this database, or a newer one');
    if (!pending.length) return ok('migrations', `all ${applied.length} applied`);
    return warn('migrations', `${migrated ? '' : 'not migrated: '}${pending.length} pending (${pending.join(', ')})`, '`npx keel migrate` applies them (`npx keel start` does too)');
  } catch (error) {
    return fail('migrations', reason(error), 'check that Keel may read this database');
  }
}

async function checkRedis(config: Config): Promise<Check> {
  try {
    const client = await connectRedis(config.REDIS_URL, config.STARTUP_CONNECT_TIMEOUT_MS);
    try {
      const info = await withinMs(client.info('server'), config.STARTUP_CONNECT_TIMEOUT_MS, 'Redis');
      return ok('Redis', `${endpoint(config.REDIS_URL)} (Redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? '?'})`);
    } finally {
      client.destroy();
    }
  } catch (error) {
    return fail('Redis', `${endpoint(config.REDIS_URL)}: not reachable (${reason(error)})`, howToStart('Redis'));
  }
}

/** Key ids of the sealed secrets in a column that no configured key opens, with their counts. */
async function sealedUnderUnknownKeys(db: Knex, column: SealedColumn, known: Set<string>): Promise<Map<string, number>> {
  const rows: { keyId: string; n: string }[] = await db(column.table)
    .select(db.raw("split_part(??, '.', 2) as key_id", [column.column]), db.raw('count(*) as n'))
    .where(column.column, 'like', 'v2.%')
    .groupByRaw('1');
  return new Map(rows.filter((r) => !known.has(r.keyId)).map((r) => [r.keyId, Number(r.n)]));
}

async function checkMasterKey(config: Config, db: Knex | undefined): Promise<Check> {
  const keys = new Set<string>();
  let source: string;
  try {
    if (config.KEEL_MASTER_KEY) {
      keys.add(keyId(parseMasterKey(config.KEEL_MASTER_KEY)));
      source = 'KEEL_MASTER_KEY';
    } else {
      const file = path.resolve(config.KEEL_DATA_DIR, 'master.key');
      if (!fs.existsSync(file)) {
        return warn('master key', `KEEL_MASTER_KEY is not set and ${file} does not exist yet`, 'set KEEL_MASTER_KEY (32 bytes, 64 hex digits) before holding anything of value; in sandbox `npx keel start` generates that file');
      }
      keys.add(keyId(parseMasterKey(fs.readFileSync(file, 'utf8'), file)));
      source = `the sandbox key in ${file}`;
    }
    if (config.KEEL_MASTER_KEY_PREVIOUS) keys.add(keyId(parseMasterKey(config.KEEL_MASTER_KEY_PREVIOUS, 'KEEL_MASTER_KEY_PREVIOUS')));
  } catch (error) {
    return fail('master key', reason(error), 'write the key as 64 hex digits or base64 of 32 bytes');
  }
  const current = [...keys][0];
  const detail = `${source} (key id ${current})${config.KEEL_MASTER_KEY_PREVIOUS ? ', KEEL_MASTER_KEY_PREVIOUS set: a rotation is under way' : ''}`;
  if (!db) return ok('master key', detail);
  const unknown = new Map<string, number>();
  try {
    for (const column of [SEALED_MNEMONICS, SEALED_WEBHOOK_SECRETS]) {
      for (const [id, n] of await sealedUnderUnknownKeys(db, column, keys)) unknown.set(id, (unknown.get(id) ?? 0) + n);
    }
  } catch (error) {
    // Tables not migrated yet: nothing sealed to check (the migrations line says what to run).
    return ok('master key', `${detail}; sealed secrets not checked (${reason(error)})`);
  }
  if (!unknown.size) return ok('master key', `${detail}; every sealed secret opens with it`);
  const list = [...unknown].map(([id, n]) => `${n} under key ${id}`).join(', ');
  return fail('master key', `${detail}; secrets sealed under a key not configured: ${list}`, 'set KEEL_MASTER_KEY (or KEEL_MASTER_KEY_PREVIOUS during a rotation) to the key with that id');
}

async function checkChains(config: Config): Promise<Check[]> {
  if (!config.KEEL_CHAINS) {
    return [ok('chains', `KEEL_CHAINS unset: sandbox dev chains ${config.DEV_CHAIN_IDS.join(', ')}, which \`npx keel start\` runs itself`)];
  }
  let families;
  try {
    families = parseChainFamilies(config.KEEL_CHAINS);
  } catch (error) {
    return [fail('chains', reason(error).replace(/\n\s*/g, ' '), 'correct KEEL_CHAINS (a JSON array, see Configuration in the README)')];
  }
  const ms = config.STARTUP_CONNECT_TIMEOUT_MS;
  return Promise.all([
    ...families.evm.map((spec) =>
      reachable(`chain ${spec.slug} (${spec.chainId})`, spec.rpcUrl, ms, `rpcUrl of chain ${spec.chainId}`, async () => {
        const [chainId, block] = await Promise.all([rpc<string>(spec.rpcUrl, 'eth_chainId', [], ms), rpc<string>(spec.rpcUrl, 'eth_blockNumber', [], ms)]);
        if (Number(chainId) !== spec.chainId) return fail(`chain ${spec.slug} (${spec.chainId})`, `RPC at ${urlOrigin(spec.rpcUrl)} serves chain ${Number(chainId)}`, `point rpcUrl of chain ${spec.chainId} in KEEL_CHAINS at a node of that chain`);
        return ok(`chain ${spec.slug} (${spec.chainId})`, `RPC at ${urlOrigin(spec.rpcUrl)}, block ${Number(block)}`);
      }),
    ),
    // A Solana cluster (issue 35): its RPC answers and has a finalized slot.
    ...families.solana.map((spec) =>
      reachable(`chain ${spec.slug} (solana ${spec.network})`, spec.rpcUrl, ms, `rpcUrl of Solana ${spec.network}`, async () => {
        const slot = await rpc<number>(spec.rpcUrl, 'getSlot', [{ commitment: 'finalized' }], ms);
        return ok(`chain ${spec.slug} (solana ${spec.network})`, `RPC at ${urlOrigin(spec.rpcUrl)}, finalized slot ${slot}`);
      }),
    ),
  ]);
}

/** A chain's check: `probe`'s answer, or a failure saying the RPC (its origin only) did not answer. */
async function reachable(name: string, rpcUrl: string, ms: number, what: string, probe: () => Promise<Check>): Promise<Check> {
  try {
    return await probe();
  } catch (error) {
    const why = (error as Error).name === 'TimeoutError' ? `no answer within ${ms} ms` : reason((error as Error).cause ?? error);
    return fail(name, `RPC at ${urlOrigin(rpcUrl)} not reachable (${why})`, `check that node, or ${what} in KEEL_CHAINS`);
  }
}

/**
 * Everything a Keel process needs before it can start, each checked within
 * STARTUP_CONNECT_TIMEOUT_MS: PostgreSQL, the migrations, Redis, the master key (and whether every
 * sealed secret opens with it) and each configured chain's RPC.
 */
export async function runDoctor(config: Config): Promise<Check[]> {
  const postgres = await checkPostgres(config);
  const checks = [postgres.check];
  const db = postgres.databaseExists ? createDb(config.DATABASE_URL, 1, { acquireTimeoutMs: config.STARTUP_CONNECT_TIMEOUT_MS }) : undefined;
  try {
    if (db) checks.push(await checkMigrations(db));
    checks.push(await checkRedis(config));
    checks.push(await checkMasterKey(config, db));
    checks.push(...(await checkChains(config)));
  } finally {
    await db?.destroy();
  }
  return checks;
}
