import { createDb, migrate } from '../../src/platform/db/knex';
import { databaseUrl, RUN_PREFIX_ENV, templateDb, withAdmin } from './databases';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Builds the migrated template every test file of this run copies. Databases are named after the
 * jest process, so concurrent runs never touch each other's; those of dead runs are dropped.
 */
export default async function globalSetup(): Promise<void> {
  process.env[RUN_PREFIX_ENV] = `keel_test_${process.pid}`;
  const template = templateDb();
  await withAdmin(async (c) => {
    const old = await c.query(`SELECT datname FROM pg_database WHERE datname LIKE 'keel_test_%'`);
    for (const { datname } of old.rows as { datname: string }[]) {
      const pid = Number(datname.split('_')[2]);
      if (!alive(pid) || pid === process.pid) await c.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
    await c.query(`CREATE DATABASE "${template}"`);
  });
  const db = createDb(databaseUrl(template), 2);
  try {
    await migrate(db);
  } finally {
    await db.destroy();
  }
}
