/**
 * A recorded Solana deposit whose slot is no longer on the cluster (here: the sandbox network started
 * afresh behind the same RPC URL, so every block Keel recorded is gone) is reverted by the deposits
 * module's one recorder, as an EVM reorg is: the row REVERTED, the custody credit reversed,
 * address.incoming_transfer_reverted emitted; deposits on the new history are credited once.
 */
import { SolanaDevnet, startSolanaDevnet } from '../../../src/platform/solana-devnet/devnet';
import { formatChainsConfig, parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { devSolanaSpec } from '../../../src/modules/chains/chain-networks';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { eventually } from '../../support/eventually';

jest.setTimeout(120_000);

let devnet: SolanaDevnet;
let t: TestKeel;
let org: TestOrg;
let solanaId: string;

beforeAll(async () => {
  devnet = await startSolanaDevnet({ slotMs: 50, finalizedLag: 4 });
  t = await startTestKeel({ KEEL_CHAINS: formatChainsConfig([...parseChainsConfig(process.env.KEEL_CHAINS!), devSolanaSpec(devnet.rpcUrl)]), CHAIN_POLL_INTERVAL_MS: 100, RATE_LIMIT_SCALE: 100 });
  org = await t.createOrg();
  solanaId = ((await org.core.get('/v1/blockchains')).body.data as { id: string; isEvmCompatible: boolean }[]).find((c) => !c.isEvmCompatible)!.id;
});

afterAll(async () => {
  await t?.stop();
  await devnet?.stop();
});

test('a recorded deposit whose slot is gone is reverted once, its credit taken back; the new history is credited', async () => {
  const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'w' })).body.data;
  const address = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, {})).body.data;
  const db = t.keel.platform.db;
  // Let the watcher's cursor get well ahead of slot 0 first, so the new history starts below it.
  await eventually(async () => devnet.slot('finalized') > 40 && (await db('chain_cursors').where({ blockchainId: solanaId }).first()));
  const first = (await org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: address.address, asset: 'USDC', amount: '5' })).body.data;
  const row = await eventually(async () => db('chain_transfers').where({ txHash: first.txHash, status: 'CONFIRMED' }).first(), 30_000);
  const custody = async () => String((await db('ledger_balances').where({ walletId: address.id, assetId: row.assetId, account: 'custody' }).first())?.available ?? '0');
  expect(await custody()).toBe('5000000');

  // The cluster's history is replaced: a new network behind the same URL.
  const port = devnet.port;
  await devnet.stop();
  devnet = await startSolanaDevnet({ port, slotMs: 50, finalizedLag: 4 });

  await eventually(async () => (await db('chain_transfers').where({ txHash: first.txHash }).first()).status === 'REVERTED', 30_000);
  expect(await custody()).toBe('0');
  const reverted = await db('outbox_events').where({ type: 'address.incoming_transfer_reverted' });
  expect(reverted.map((e) => (typeof e.envelope === 'string' ? JSON.parse(e.envelope) : e.envelope).data.hash)).toEqual([first.txHash]);

  const second = (await org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: address.address, asset: 'USDC', amount: '2' })).body.data;
  await eventually(async () => db('chain_transfers').where({ txHash: second.txHash, status: 'CONFIRMED' }).first(), 30_000);
  expect(await custody()).toBe('2000000');
  expect(await db('chain_transfers').where({ txHash: first.txHash }).count()).toEqual([{ count: '1' }]);
});
