import { ethers } from 'ethers';
import { createDb, Db } from '../../../src/platform/db/knex';
import { SanctionsLists } from '../../../src/modules/aml/sanctions-lists';
import { shippedSanctionsSnapshot } from '../../../src/modules/aml/sanctions-files';
import type { SanctionsSnapshot } from '../../../src/modules/aml/sanctions-screen';
import { createTestDatabase, dropTestDatabase, runPrefix } from '../../support/databases';

/**
 * `keel aml load` records a version of the lists in PostgreSQL (src/modules/aml/sanctions-lists.ts):
 * here two loads run at the same moment, as two operators (or a cron job and an operator) would.
 */
const NAME = `${runPrefix()}_sanctions_lists`;
const TODAY = new Date().toISOString().slice(0, 10);
const shipped = shippedSanctionsSnapshot();
let db: Db;
let lists: SanctionsLists;

beforeAll(async () => {
  db = createDb(await createTestDatabase(NAME), 4);
  lists = new SanctionsLists(db);
});
afterAll(async () => {
  await db.destroy();
  await dropTestDatabase(NAME);
});

const oneList = (name: string, addresses: string[]): SanctionsSnapshot => ({ source: `test: ${name}`, listDate: TODAY, lists: [{ name, addresses }] });
const randomAddresses = (n: number) => Array.from({ length: n }, () => ethers.Wallet.createRandom().address);
/** Whether a session of this database holds an advisory lock (a load's). */
const underWay = async () => (await db.raw(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)).rows.length > 0;
const sizes = (snapshot: SanctionsSnapshot) => Object.fromEntries(snapshot.lists.map((l) => [l.name, l.addresses.length]));

describe('two loads at the same moment', () => {
  test('of one list file each: the later waits for the earlier and keeps its list; the lists in use carry both', async () => {
    const [first, second] = await Promise.all([
      lists.load(oneList('FIRST', randomAddresses(3)), { shipped, keepOthers: true }),
      lists.load(oneList('SECOND', randomAddresses(2)), { shipped, keepOthers: true }),
    ]);
    const [earlier, later] = Number(first.version.id) < Number(second.version.id) ? [first, second] : [second, first];
    expect(later.keptFromPrevious).toContain(earlier === first ? 'FIRST' : 'SECOND');
    expect(later.inUse).toBe(true);
    const inUse = await lists.inUse(shipped);
    expect(inUse.source).toBe(later.version.source);
    expect(sizes(inUse)).toMatchObject({ FIRST: 3, SECOND: 2, ETH: shipped.lists.find((l) => l.name === 'ETH')!.addresses.length });
  });

  test('the later is checked against the lists the earlier loaded: one less than half of it is refused, one clear line, and nothing is recorded', async () => {
    const before = await lists.newest();
    const loading = lists.load(oneList('GROWN', randomAddresses(40)), { shipped, keepOthers: true });
    const settled = loading.then(() => true, () => true);
    // The truncated one starts once the full one is under way (holds the loads' lock) or done.
    while (!(await Promise.race([settled, underWay()]))) await new Promise((r) => setTimeout(r, 5));
    const [full, truncated] = await Promise.allSettled([loading, lists.load(oneList('GROWN', randomAddresses(5)), { shipped, keepOthers: true })]);
    expect(full.status).toBe('fulfilled');
    expect(truncated).toEqual({ status: 'rejected', reason: new Error('Refusing to load list(s) less than half the list in use: GROWN (5 entries, 40 in use) (a truncated download?); --force loads them anyway') });
    const newest = await lists.newest();
    expect(Number(newest!.id)).toBe(Number(before!.id) + 1);
    expect(sizes(await lists.inUse(shipped))).toMatchObject({ GROWN: 40 });
  });
});
