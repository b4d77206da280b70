import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { claimNodeIdentity, NodeIdentity } from '../../../src/platform/node-identity';
import { createLogger } from '../../../src/platform/logger';
import { createTestDatabase, dropTestDatabase, runPrefix } from '../../support/databases';

const logger = createLogger('silent');
const name = `${runPrefix()}_node_id_${randomBytes(4).toString('hex')}`;
let DATABASE_URL: string;
const held: NodeIdentity[] = [];

beforeAll(async () => {
  DATABASE_URL = await createTestDatabase(name);
});

afterAll(async () => {
  await Promise.all(held.map((h) => h.release()));
  await dropTestDatabase(name);
});

async function claim(config: { KEEL_NODE_ID?: string; KEEL_DATA_DIR: string }): Promise<NodeIdentity> {
  const identity = await claimNodeIdentity({ ...config, DATABASE_URL }, logger);
  held.push(identity);
  return identity;
}

test('without KEEL_NODE_ID the id is made once and kept in the data folder', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-node-id-'));
  const first = await claim({ KEEL_DATA_DIR: dir });
  expect(first.source).toBe('data folder');
  expect(readFileSync(join(dir, 'node-id'), 'utf8').trim()).toBe(first.id);
  await first.release();
  const again = await claim({ KEEL_DATA_DIR: dir });
  expect(again).toMatchObject({ id: first.id, source: 'data folder' });
});

test('while one live process holds the data folder’s id, a second runs as hostname:pid', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-node-id-'));
  const first = await claim({ KEEL_DATA_DIR: dir });
  const second = await claim({ KEEL_DATA_DIR: dir });
  expect(second.source).toBe('process');
  expect(second.id).not.toBe(first.id);
});

test('a KEEL_NODE_ID held by a live process is refused; once released it is taken', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'keel-node-id-'));
  const first = await claim({ KEEL_NODE_ID: 'node-a', KEEL_DATA_DIR: dir });
  expect(first).toMatchObject({ id: 'node-a', source: 'KEEL_NODE_ID' });
  await expect(claimNodeIdentity({ KEEL_NODE_ID: 'node-a', KEEL_DATA_DIR: dir, DATABASE_URL }, logger)).rejects.toThrow('KEEL_NODE_ID=node-a is held by another running Keel process');
  await first.release();
  expect(await claim({ KEEL_NODE_ID: 'node-a', KEEL_DATA_DIR: dir })).toMatchObject({ id: 'node-a', source: 'KEEL_NODE_ID' });
}, 20_000);
