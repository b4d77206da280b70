import type { Knex } from 'knex';
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

/**
 * Sanctions lists loaded into PostgreSQL (`keel aml load`), one version per load. The version
 * screened against is the newest by list date, then by load; every Keel process picks it up.
 */
export class SanctionsLists {
  constructor(private readonly db: Knex) {}

  /** The newest version (by list date, then load), without its entries. */
  async newest(): Promise<SanctionsListVersion | null> {
    const row = (await this.db('sanctions_list_versions')
      .orderByRaw('list_date DESC NULLS LAST, id DESC')
      .first([...VERSION_COLUMNS, this.db.raw('list_date::text AS list_date')])) as VersionRow | undefined;
    return row ? versionView(row) : null;
  }

  /** A version's lists. */
  async snapshot(version: SanctionsListVersion): Promise<SanctionsSnapshot> {
    const rows: { list: string; address: string }[] = await this.db('sanctions_list_entries').where({ versionId: version.id }).orderBy(['list', 'address']).select('list', 'address');
    const lists = new Map<string, string[]>();
    for (const r of rows) (lists.get(r.list) ?? lists.set(r.list, []).get(r.list)!).push(r.address);
    return { source: version.source, listDate: version.listDate, lists: [...lists].map(([name, addresses]) => ({ name, addresses })) };
  }

  /**
   * Records a new version. With `base`, lists of the base that `snapshot` does not carry are kept
   * (loading one list file replaces that list only).
   */
  async load(snapshot: SanctionsSnapshot, base?: SanctionsSnapshot): Promise<SanctionsListVersion> {
    const names = new Set(snapshot.lists.map((l) => l.name));
    const lists = [...(base?.lists.filter((l) => !names.has(l.name)) ?? []), ...snapshot.lists];
    const entries = new Map<string, { list: string; address: string }>();
    for (const l of lists) for (const a of l.addresses) if (a.trim()) entries.set(`${l.name}\u0000${a.trim()}`, { list: l.name, address: a.trim() });
    const addressCount = new Set([...entries.values()].map((e) => normaliseAddress(e.address))).size;
    return this.db.transaction(async (trx) => {
      const [row] = (await trx('sanctions_list_versions')
        .insert({ source: snapshot.source, listDate: snapshot.listDate, addressCount })
        .returning([...VERSION_COLUMNS, trx.raw('list_date::text AS list_date')])) as VersionRow[];
      const all = [...entries.values()].map((e) => ({ versionId: row.id, ...e }));
      for (let i = 0; i < all.length; i += INSERT_CHUNK) await trx('sanctions_list_entries').insert(all.slice(i, i + INSERT_CHUNK));
      return versionView(row);
    });
  }

  /** The newest loaded version when it is at least as recent as `shipped` (by list date), else null. */
  async preferred(shipped: SanctionsSnapshot): Promise<SanctionsListVersion | null> {
    const newest = await this.newest();
    if (!newest) return null;
    if (shipped.listDate && newest.listDate && newest.listDate < shipped.listDate) return null;
    return newest;
  }

  /** The lists to screen against: the preferred loaded version, or the shipped snapshot. */
  async inUse(shipped: SanctionsSnapshot): Promise<SanctionsSnapshot> {
    const version = await this.preferred(shipped);
    return version ? this.snapshot(version) : shipped;
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
