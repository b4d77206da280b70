import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { formatChainsConfig, parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { JOURNAL_FILE } from '../../../src/platform/chain/devchain-journal';
import { createLogger } from '../../../src/platform/logger';
import { startKeel } from '../../../src/app';
import { eventually } from '../../support/eventually';
import { startTestKeel, TestKeel } from '../../support/keel';

const logLines: string[] = [];
const logger = createLogger('info', new Writable({ write: (chunk, _enc, done) => (logLines.push(chunk.toString()), done()) }));
const logged = (prefix: string) => logLines.map((l) => JSON.parse(l) as { msg: string; chainId?: number; reason?: string }).filter((l) => l.msg.startsWith(prefix));

let t: TestKeel | undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'keel-chain-reset-'));
afterEach(async () => {
  await t?.stop();
  t = undefined;
  logLines.length = 0;
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("Keel's own dev chain that came back without the block at the watcher's cursor is a reset, not a reorg", async () => {
  t = await startTestKeel({ KEEL_CHAINS: '', KEEL_DATA_DIR: dataDir, DEV_CHAIN_PORT: 0, DEV_CHAIN_BLOCK_INTERVAL_MS: 200, CHAIN_POLL_INTERVAL_MS: 100 }, { logger });
  const journal = join(dataDir, 'devchain-31337', JOURNAL_FILE);
  const entries = () => readFileSync(journal, 'utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as { n: number; tx: string[] });
  // The journal loses its tail: the blocks after the test tokens' deployment.
  const keep = Math.max(...entries().filter((e) => e.tx.length).map((e) => e.n));
  const db = t.keel.platform.db;
  const chain = await db('blockchains').where({ chainId: 31337 }).first();
  await eventually(async () => Number((await db('chain_cursors').where({ blockchainId: chain.id }).first())?.blockNumber ?? 0) > keep + 2, 30_000, 100);
  await t.keel.stop();
  const [header, ...lines] = readFileSync(journal, 'utf8').trim().split('\n');
  writeFileSync(journal, [header, ...lines.slice(0, keep)].join('\n') + '\n');

  // The same database and data dir. Interval mining is slowed so the chain stays at the journal's
  // tail while Keel checks it: its new empty blocks would otherwise be the very blocks it lost (same
  // parents, same timestamps), and on a slow machine it could mine back to the cursor first.
  t.keel = await startKeel({ ...t.config, DEV_CHAIN_BLOCK_INTERVAL_MS: 60_000 }, logger);
  expect(logged('chain reset')).toEqual([expect.objectContaining({ chainId: 31337, reason: 'cursor-block-gone' })]);
  expect(logged('chain reorganised')).toEqual([]);
});

test('a configured chain that does not answer at start is not checked, and Keel starts; the others get their genesis recorded', async () => {
  const shared = parseChainsConfig(process.env.KEEL_CHAINS!);
  const dead = { ...shared[0], chainId: 99_999, slug: 'dead-99999', name: 'Dead chain', rpcUrl: 'http://127.0.0.1:1' };
  t = await startTestKeel({ KEEL_CHAINS: formatChainsConfig([...shared, dead]) }, { logger });
  expect(logged('chain identity not checked')).toEqual([expect.objectContaining({ chainId: 99_999 })]);
  const rows = await t.keel.platform.db('blockchains').orderBy('chainId');
  expect(rows.map((r) => [Number(r.chainId), r.genesisHash !== null])).toEqual([...shared.map((s) => [s.chainId, true]), [99_999, false]]);
});
