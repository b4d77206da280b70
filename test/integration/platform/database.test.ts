import { createDb, Db, ensureDatabase, migrate } from '../../../src/platform/db/knex';
import { createLogger } from '../../../src/platform/logger';
import { fetchPage } from '../../../src/platform/db/fetch-page';
import { insertRowsPart, part, rowsOf, runAsOneStatement, StatementCheckFailed } from '../../../src/platform/db/one-statement';
import { MAX_BINDINGS_TO_PREPARE } from '../../../src/platform/db/preparing-pg-client';
import { migrationSource } from '../../../src/platform/db/migrations';
import { createTestDatabase, databaseUrl, dropTestDatabase, runPrefix } from '../../support/databases';

const NAME = `${runPrefix()}_platform_db`;
let db: Db;

beforeAll(async () => {
  // One pooled connection, so every query below runs in the session it inspects.
  db = createDb(await createTestDatabase(NAME), 1);
  await db.raw('CREATE TABLE items (id int PRIMARY KEY, label text NOT NULL, amount int NOT NULL CHECK (amount >= 0))');
  await db.raw('CREATE TABLE typed (id uuid PRIMARY KEY, amount numeric NOT NULL, big_count bigint, flag boolean, noted_at timestamptz, note text, created_at timestamptz NOT NULL DEFAULT now())');
});

afterAll(async () => {
  await db.destroy();
  await dropTestDatabase(NAME);
});

beforeEach(async () => {
  await db('items').delete();
  await db('typed').delete();
});

async function preparedStatements(): Promise<string[]> {
  const { rows } = await db.raw('SELECT statement FROM pg_prepared_statements');
  return rows.map((r: { statement: string }) => r.statement);
}

describe('the database client', () => {
  it('prepares a parameterised statement once per connection and reuses it', async () => {
    await db('items').insert({ id: 1, label: 'a', amount: 1 });
    for (let i = 0; i < 3; i++) expect(await db('items').where({ id: 1 }).first()).toMatchObject({ label: 'a' });
    const lookups = (await preparedStatements()).filter((s) => s.startsWith('select * from "items" where "id" = $1'));
    expect(lookups).toHaveLength(1);
  });

  it('keeps answering after a migration changes a table under a prepared SELECT *', async () => {
    await db('items').insert({ id: 1, label: 'a', amount: 1 });
    expect(await db('items').where({ id: 1 }).first()).toEqual({ id: 1, label: 'a', amount: 1 });
    expect(await db.transaction((trx) => trx('items').where({ amount: 1 }).first())).toEqual({ id: 1, label: 'a', amount: 1 });
    await db.raw('ALTER TABLE items ADD COLUMN note text');
    try {
      expect(await db('items').where({ id: 1 }).first()).toEqual({ id: 1, label: 'a', amount: 1, note: null });
      // Inside a transaction the first stale use aborts it; the statement is not named again.
      await expect(db.transaction((trx) => trx('items').where({ amount: 1 }).first())).rejects.toMatchObject({ code: '0A000' });
      expect(await db.transaction((trx) => trx('items').where({ amount: 1 }).first())).toMatchObject({ note: null });
    } finally {
      await db.raw('ALTER TABLE items DROP COLUMN note');
    }
  });

  it('names nothing when prepared statements are turned off (DB_PREPARED_STATEMENTS=false)', async () => {
    const plain = createDb(db.client.config.connection, 1, { preparedStatements: false });
    try {
      expect(await plain('items').where({ id: 42 })).toEqual([]);
      const { rows } = await plain.raw('SELECT count(*)::int AS n FROM pg_prepared_statements');
      expect(rows[0].n).toBe(0);
    } finally {
      await plain.destroy();
    }
  });

  it('leaves statements without bindings and large batches unnamed', async () => {
    const before = (await preparedStatements()).length;
    const rows = Array.from({ length: MAX_BINDINGS_TO_PREPARE }, (_, i) => ({ id: 100 + i, label: 'batch', amount: i }));
    await db('items').insert(rows);
    await db.raw('SELECT count(*) FROM items');
    expect((await preparedStatements()).length).toBe(before);
  });
});

describe('nodes starting together on a fresh database', () => {
  const fresh = `${NAME}_fresh`;
  afterEach(() => dropTestDatabase(fresh));

  it('all create it: those that lose the race find it created', async () => {
    await Promise.all(Array.from({ length: 4 }, () => ensureDatabase(databaseUrl(fresh))));
    const nodes = createDb(databaseUrl(fresh), 1);
    try {
      expect((await nodes.raw('SELECT current_database() AS name')).rows[0].name).toBe(fresh);
    } finally {
      await nodes.destroy();
    }
  });

  it('all migrate it: one node applies each migration, once, and the others find nothing pending', async () => {
    await ensureDatabase(databaseUrl(fresh));
    const nodes = Array.from({ length: 3 }, () => createDb(databaseUrl(fresh), 2));
    try {
      const applied = await Promise.all(nodes.map((node) => migrate(node)));
      const migrations = await migrationSource().getMigrations([]);
      expect(applied.filter((names) => names.length > 0)).toEqual([migrations]);
      expect((await nodes[0]('knex_migrations').count({ n: '*' }))[0].n).toBe(String(migrations.length));
    } finally {
      await Promise.all(nodes.map((node) => node.destroy()));
    }
  });
});

describe('fetchPage', () => {
  beforeEach(() => db('items').insert(Array.from({ length: 7 }, (_, i) => ({ id: i + 1, label: `item ${i + 1}`, amount: i }))));
  const order = [{ column: 'id' }];

  async function queriesDuring(fn: () => Promise<unknown>): Promise<string[]> {
    const seen: string[] = [];
    const record = (q: { sql: string }) => seen.push(q.sql);
    db.on('query', record);
    try {
      await fn();
    } finally {
      db.off('query', record);
    }
    return seen;
  }

  it('tells the total from a short page without counting', async () => {
    let page: unknown;
    const queries = await queriesDuring(async () => (page = await fetchPage<{ id: number }>(db('items'), { limit: 5, offset: 5 }, order)));
    expect(page).toEqual({ rows: [expect.objectContaining({ id: 6 }), expect.objectContaining({ id: 7 })], total: 7 });
    expect(queries).toHaveLength(1);
  });

  it('counts when the page is full or past the end', async () => {
    const queries = await queriesDuring(async () => expect((await fetchPage(db('items'), { limit: 3, offset: 0 }, order)).total).toBe(7));
    expect(queries).toHaveLength(2);
    expect(await fetchPage(db('items'), { limit: 3, offset: 50 }, order)).toEqual({ rows: [], total: 7 });
    expect(await fetchPage(db('items').where('amount', '>', 100), { limit: 3, offset: 0 }, order)).toEqual({ rows: [], total: 0 });
  });
});

describe('runAsOneStatement', () => {
  it('applies every part together', async () => {
    await db('items').insert({ id: 1, label: 'a', amount: 5 });
    await runAsOneStatement(db, [
      part('added', db('items').insert({ id: 2, label: 'b', amount: 1 })),
      part('changed', db('items').where({ id: 1 }).update({ amount: 4 })),
    ]);
    expect(await db('items').orderBy('id').select('id', 'amount')).toEqual([
      { id: 1, amount: 4 },
      { id: 2, amount: 1 },
    ]);
  });

  it('applies none of them when one fails', async () => {
    await db('items').insert({ id: 1, label: 'a', amount: 5 });
    await expect(
      runAsOneStatement(db, [
        part('added', db('items').insert({ id: 2, label: 'b', amount: 1 })),
        part('overdrawn', db('items').where({ id: 1 }).update({ amount: -1 })),
      ]),
    ).rejects.toMatchObject({ code: '23514' });
    expect(await db('items').orderBy('id').select('id', 'amount')).toEqual([{ id: 1, amount: 5 }]);
  });

  it('is refused as a whole when a part does not touch the rows it requires', async () => {
    await db('items').insert({ id: 1, label: 'a', amount: 5 });
    const moveFrom = (expected: number) => ({ ...part('moved', db('items').where({ id: 1, amount: expected }).update({ amount: 6 }, ['id'])), expectRows: 1 });
    await expect(runAsOneStatement(db, [part('added', db('items').insert({ id: 2, label: 'b', amount: 1 })), moveFrom(4)])).rejects.toBeInstanceOf(StatementCheckFailed);
    expect(await db('items').orderBy('id').select('id', 'amount')).toEqual([{ id: 1, amount: 5 }]);
    await runAsOneStatement(db, [part('added', db('items').insert({ id: 2, label: 'b', amount: 1 })), moveFrom(5)]);
    expect(await db('items').orderBy('id').select('id', 'amount')).toEqual([
      { id: 1, amount: 6 },
      { id: 2, amount: 1 },
    ]);
  });
});

describe('rows passed as one jsonb binding (rowsOf, insertRowsPart)', () => {
  const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

  it('inserts exact values of every type, and the defaults of columns no row names', async () => {
    const notedAt = new Date('2026-11-23T08:00:00.123Z');
    const rows = [
      { id: uuid(1), amount: '123456789012345678901234.000000000000000001', bigCount: '9007199254740993', flag: true, notedAt, note: `O'Brien "quoted" \\ ü 😀` },
      { id: uuid(2), amount: '0', bigCount: null, flag: false, notedAt: null, note: null },
    ];
    await runAsOneStatement(db, [insertRowsPart('added', 'typed', rows)]);
    const stored = await db('typed').orderBy('id').select('id', db.raw('amount::text AS amount'), db.raw('big_count::text AS big_count'), 'flag', 'notedAt', 'note', 'createdAt');
    expect(stored.map(({ createdAt, ...r }: { createdAt: Date }) => r)).toEqual(rows);
    for (const r of stored) expect(r.createdAt).toBeInstanceOf(Date);
  });

  it('keeps one statement text, prepared once, whatever the number of rows', async () => {
    const write = (from: number, count: number) =>
      runAsOneStatement(db, [insertRowsPart('added', 'typed', Array.from({ length: count }, (_, i) => ({ id: uuid(from + i), amount: String(i) })))]);
    await write(1, 2);
    await write(10, 3);
    await write(100, 500);
    expect(await db('typed').count({ n: '*' }).first()).toEqual({ n: '505' });
    const inserts = (await preparedStatements()).filter((s) => s.includes('INSERT INTO typed (id, amount) SELECT'));
    expect(inserts).toHaveLength(1);
  });

  it('serves as the source of an UPDATE', async () => {
    await db('items').insert([
      { id: 1, label: 'a', amount: 5 },
      { id: 2, label: 'b', amount: 5 },
    ]);
    const changes = rowsOf('items', [{ id: 2, amount: 7 }]);
    await runAsOneStatement(db, [{ name: 'changed', sql: `UPDATE items AS i SET amount = v.amount FROM ${changes.sql} AS v WHERE i.id = v.id`, bindings: changes.bindings }]);
    expect(await db('items').orderBy('id').select('id', 'amount')).toEqual([
      { id: 1, amount: 5 },
      { id: 2, amount: 7 },
    ]);
  });

  it('refuses a table or column name that is not a plain identifier', () => {
    expect(() => rowsOf('items; DROP TABLE items', [])).toThrow(/identifier/);
    expect(() => insertRowsPart('added', 'items', [{ 'id) VALUES (1); --': 1 }])).toThrow(/identifier/);
  });
});

describe("the database client's own warnings", () => {
  it('go to the structured log, not the console: a connection that cannot be made is a warning naming why', async () => {
    const lines: { level: number; msg: string; knex?: string }[] = [];
    const logger = createLogger('warn', { write: (line: string) => lines.push(JSON.parse(line)) });
    const console = jest.spyOn(global.console, 'log');
    // A port nothing listens on: every connection attempt is refused at once.
    const unreachable = createDb('postgres://postgres@127.0.0.1:1/nothing', 1, { acquireTimeoutMs: 2000, logger });
    try {
      await expect(unreachable.raw('SELECT 1')).rejects.toThrow();
      expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: 'database client warning', knex: expect.stringContaining('ECONNREFUSED') }));
      expect(console).not.toHaveBeenCalled();
    } finally {
      console.mockRestore();
      await unreachable.destroy();
    }
  });
});

describe('a failed query in the log', () => {
  it("names the constraint, table and code, never the values the query carried (knex's SQL, PostgreSQL's detail)", async () => {
    const lines: string[] = [];
    const logger = createLogger('warn', { write: (line: string) => void lines.push(line) });
    const sealed = 'v2.k1.SEALEDSECRETVALUE';
    await db('items').insert({ id: 1, label: sealed, amount: 1 });
    const error = await db('items')
      .insert({ id: 1, label: sealed, amount: 2 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({ code: '23505', detail: expect.stringContaining('(id)=(1)') });
    // knex writes the statement before PostgreSQL's words; the row, values and all, is in the detail.
    expect((error as Error).message).toMatch(/^insert into "items" .* - duplicate key value violates unique constraint "items_pkey"$/);
    logger.warn({ err: error }, 'the write failed');
    const failing = await db('items')
      .insert({ id: 2, label: sealed, amount: -1 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((failing as { detail: string }).detail).toContain(sealed);
    logger.warn({ err: failing }, 'the write failed');
    expect(lines).toHaveLength(2);
    expect(lines.join('')).not.toContain('SEALEDSECRETVALUE');
    expect(lines.join('')).not.toMatch(/insert into/i);
    const [unique, check] = lines.map((l) => JSON.parse(l).err);
    expect(unique).toMatchObject({ message: 'duplicate key value violates unique constraint "items_pkey"', code: '23505', constraint: 'items_pkey', table: 'items', severity: 'ERROR' });
    expect(unique.stack).toMatch(/^error: duplicate key value violates unique constraint "items_pkey"\n\s+at /);
    expect(check).toMatchObject({ message: 'new row for relation "items" violates check constraint "items_amount_check"', code: '23514', constraint: 'items_amount_check' });
  });
});
