import type { Knex } from 'knex';
import { lockUntilCommit } from '../../platform/db/advisory-lock';
import { shrunkLists } from './sanctions-files';
import { normaliseAddress, SanctionsScreen, SanctionsSnapshot } from './sanctions-screen';

/** A version of the lists as recorded by `keel aml load`. */
export interface SanctionsListVersion {
  id: string;
  source: string;
  listDate: string | null;
  addressCount: number;
  loadedAt: Date;
}

/** A version row as knex returns it (camel-cased), the date as text (YYYY-MM-DD, no time zone). */
interface VersionRow {
  id: string;
  source: string;
  listDate: string | null;
  addressCount: number;
  loadedAt: Date;
}

function versionView(r: VersionRow): SanctionsListVersion {
  return { id: String(r.id), source: r.source, listDate: r.listDate, addressCount: r.addressCount, loadedAt: r.loadedAt };
}

const VERSION_COLUMNS = ['id', 'source', 'address_count', 'loaded_at'];

/** Rows are inserted this many at a time. */
const INSERT_CHUNK = 1_000;

/** The advisory lock a load holds until it commits: loads run one at a time. */
const LOAD_LOCK = 'keel:sanctions-lists:load';

/** How `load` treats the lists in use. */
export interface SanctionsLoadOptions {
  /** The snapshot shipped with Keel: the lists in use while no loaded version is as recent. */
  shipped: SanctionsSnapshot;
  /** One list file: the lists in use that the snapshot does not carry are kept. Otherwise (a directory) it replaces every list. */
  keepOthers?: boolean;
  /** Load even lists less than half their namesake in use (a truncated download?). */
  force?: boolean;
}

/** What a load recorded: the version, the lists it kept from the lists in use, and whether it is now the version in use. */
export interface SanctionsLoad {
  version: SanctionsListVersion;
  keptFromPrevious: string[];
  inUse: boolean;
}

/**
 * Sanctions lists loaded into PostgreSQL (`keel aml load`), one version per load. The version
 * screened against is the newest by list date, then by load; every Keel process picks it up.
 */
export class SanctionsLists {
  constructor(private readonly db: Knex) {}

  /** The newest version (by list date, then load), without its entries. */
  async newest(db: Knex = this.db): Promise<SanctionsListVersion | null> {
    const row = (await db('sanctions_list_versions')
      .orderByRaw('list_date DESC NULLS LAST, id DESC')
      .first([...VERSION_COLUMNS, db.raw('list_date::text AS list_date')])) as VersionRow | undefined;
    return row ? versionView(row) : null;
  }

  /** A version's lists. */
  async snapshot(version: SanctionsListVersion, db: Knex = this.db): Promise<SanctionsSnapshot> {
    const rows: { list: string; address: string }[] = await db('sanctions_list_entries').where({ versionId: version.id }).orderBy(['list', 'address']).select('list', 'address');
    const lists = new Map<string, string[]>();
    for (const r of rows) (lists.get(r.list) ?? lists.set(r.list, []).get(r.list)!).push(r.address);
    return { source: version.source, listDate: version.listDate, lists: [...lists].map(([name, addresses]) => ({ name, addresses })) };
  }

  /**
   * Records a new version of the lists. With `keepOthers` (one list file), the lists in use that
   * `snapshot` does not carry are kept; otherwise it replaces every list. A list less than half its
   * namesake in use (with a directory, also a list in use it lacks) is refused unless `force`.
   * Loads run one at a time: one started while another is under way waits for it to commit, then
   * reads the lists in use (the other's among them) and is checked against them; neither's lists
   * are lost, and no version is seen before all its entries are.
   */
  async load(snapshot: SanctionsSnapshot, options: SanctionsLoadOptions): Promise<SanctionsLoad> {
    return this.db.transaction(async (trx) => {
      await lockUntilCommit(trx, [LOAD_LOCK]);
      const inUse = await this.inUse(options.shipped, trx);
      const shrunk = shrunkLists(snapshot, inUse, !options.keepOthers);
      if (shrunk.length && !options.force) {
        const sizes = shrunk.map((l) => `${l.name} (${l.entries} entries, ${l.inUse} in use)`).join(', ');
        throw new Error(`Refusing to load list(s) less than half the list in use: ${sizes} (a truncated download?); --force loads them anyway`);
      }
      const names = new Set(snapshot.lists.map((l) => l.name));
      const kept = options.keepOthers ? inUse.lists.filter((l) => !names.has(l.name)) : [];
      const lists = [...kept, ...snapshot.lists];
      const entries = new Map<string, { list: string; address: string }>();
      for (const l of lists) for (const a of l.addresses) if (a.trim()) entries.set(`${l.name}\u0000${a.trim()}`, { list: l.name, address: a.trim() });
      const addressCount = new Set([...entries.values()].map((e) => normaliseAddress(e.address))).size;
      const [row] = (await trx('sanctions_list_versions')
        .insert({ source: snapshot.source, listDate: snapshot.listDate, addressCount })
        .returning([...VERSION_COLUMNS, trx.raw('list_date::text AS list_date')])) as VersionRow[];
      const all = [...entries.values()].map((e) => ({ versionId: row.id, ...e }));
      for (let i = 0; i < all.length; i += INSERT_CHUNK) await trx('sanctions_list_entries').insert(all.slice(i, i + INSERT_CHUNK));
      const version = versionView(row);
      return { version, keptFromPrevious: kept.map((l) => l.name), inUse: (await this.preferred(options.shipped, trx))?.id === version.id };
    });
  }

  /** The newest loaded version when it is at least as recent as `shipped` (by list date), else null. */
  async preferred(shipped: SanctionsSnapshot, db: Knex = this.db): Promise<SanctionsListVersion | null> {
    const newest = await this.newest(db);
    if (!newest) return null;
    if (shipped.listDate && newest.listDate && newest.listDate < shipped.listDate) return null;
    return newest;
  }

  /** The lists to screen against: the preferred loaded version, or the shipped snapshot. */
  async inUse(shipped: SanctionsSnapshot, db: Knex = this.db): Promise<SanctionsSnapshot> {
    const version = await this.preferred(shipped, db);
    return version ? this.snapshot(version, db) : shipped;
  }

  /**
   * Puts the preferred loaded version into `screen` when it is not already there (`current`, a
   * version id or null for the shipped snapshot); returns the version now in use.
   */
  async refresh(screen: SanctionsScreen, shipped: SanctionsSnapshot, current: string | null): Promise<string | null> {
    const version = await this.preferred(shipped);
    if (!version || version.id === current) return current;
    screen.replace(await this.snapshot(version));
    return version.id;
  }
}
