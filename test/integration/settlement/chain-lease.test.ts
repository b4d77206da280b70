import { createDb, Db } from '../../../src/platform/db/knex';
import { ChainLease, fencedTransaction, LeaseLost } from '../../../src/modules/settlement/chain-lease';
import { createTestDatabase, dropTestDatabase, runPrefix } from '../../support/databases';

const NAME = `${runPrefix()}_chain_lease`;
// Long enough that a stalled event loop on a loaded machine does not reach past the margins below.
const LEASE_MS = 3_000;
let db: Db;
let blockchainId: string;

const row = () => db('settlement_leases').where({ blockchainId }).first();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  db = createDb(await createTestDatabase(NAME), 4);
  [{ id: blockchainId }] = await db('blockchains')
    .insert({ chainId: 990_001, name: 'Lease chain', slug: 'lease-chain', symbol: 'ETH', network: 'testnet', tokenStandard: 'ERC20', rpcUrl: 'http://127.0.0.1:1', confirmations: 1 })
    .returning('id');
});

afterAll(async () => {
  await db.destroy();
  await dropTestDatabase(NAME);
});

beforeEach(() => db('settlement_leases').delete());

test('a holder renewing within a third of its lease writes nothing: its expiry and token stay as taken', async () => {
  const lease = (await ChainLease.take(db, blockchainId, 'worker-1', LEASE_MS))!;
  const taken = await row();
  for (let i = 0; i < 5; i++) await lease.renew();
  expect(await row()).toEqual(taken);
});

test('once a third of the lease has passed, renewing writes a later expiry under the same token', async () => {
  const lease = (await ChainLease.take(db, blockchainId, 'worker-1', LEASE_MS))!;
  const taken = await row();
  await sleep(LEASE_MS / 3 + 50);
  await lease.renew();
  const renewed = await row();
  expect(renewed.token).toBe(taken.token);
  expect(new Date(renewed.expiresAt).getTime()).toBeGreaterThan(new Date(taken.expiresAt).getTime());
});

test('another worker cannot take a lease its holder keeps renewing, and takes it once it lapsed; the old holder is then refused', async () => {
  const first = (await ChainLease.take(db, blockchainId, 'worker-1', LEASE_MS))!;
  await sleep(LEASE_MS / 2);
  await first.renew();
  await sleep(LEASE_MS / 2 + 200); // past the first expiry, well within the renewed one
  expect(await ChainLease.take(db, blockchainId, 'worker-2', LEASE_MS)).toBeNull();

  await sleep(LEASE_MS); // nobody renews: it lapses
  const second = (await ChainLease.take(db, blockchainId, 'worker-2', LEASE_MS))!;
  expect(BigInt(second.token)).toBeGreaterThan(BigInt(first.token));
  // The first holder's renewal is due (more than a third has passed), so it asks, and learns it lost.
  await expect(first.renew()).rejects.toBeInstanceOf(LeaseLost);
  await expect(fencedTransaction(db, first, async () => 'written')).rejects.toBeInstanceOf(LeaseLost);
  await expect(fencedTransaction(db, second, async () => 'written')).resolves.toBe('written');
});
