import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ethers } from 'ethers';
import { DevChain, startDevChain } from '../../../src/platform/chain/devchain';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { rpc } from '../../../src/platform/chain/json-rpc';
import { fundFromFaucet } from '../../../src/platform/chain/faucet';
import { revert, snapshot } from '../../support/chain-controls';
import { JOURNAL_FILE } from '../../../src/platform/chain/devchain-journal';

const dataDir = mkdtempSync(join(tmpdir(), 'keel-devchain-journal-'));
const journal = join(dataDir, 'devchain-31337', JOURNAL_FILE);
const funded = devChainAccount(0).privateKey;
const alice = ethers.Wallet.createRandom().address;
let chain: DevChain | undefined;

const start = async () => (chain = await startDevChain({ chainId: 31337, dataDir, blockIntervalMs: 200 }));
const block = (c: DevChain, tag: string) => rpc<{ number: string; hash: string }>(c.rpcUrl, 'eth_getBlockByNumber', [tag, false]);
const balance = (c: DevChain) => rpc<string>(c.rpcUrl, 'eth_getBalance', [alice, 'latest']);

afterAll(async () => {
  await chain?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('a chain with a data dir comes back with the same blocks and balances, without what an evm_revert took back', async () => {
  const first = await start();
  expect(first.history).toBe('fresh');
  await fundFromFaucet(first.rpcUrl, funded, { to: alice, amount: '1' });
  const beforeRevert = await snapshot(first.rpcUrl);
  await fundFromFaucet(first.rpcUrl, funded, { to: alice, amount: '100' });
  await revert(first.rpcUrl, beforeRevert);
  await fundFromFaucet(first.rpcUrl, funded, { to: alice, amount: '2' });
  const [genesis, head, held] = [await block(first, '0x0'), await block(first, 'latest'), await balance(first)];
  await first.stop();

  const again = await start();
  expect(again.history).toBe('restored');
  expect(await block(again, '0x0')).toEqual(genesis);
  expect(await block(again, head.number)).toEqual(head);
  expect(BigInt(await balance(again))).toBe(BigInt(held));
  expect(BigInt(held)).toBe(3n * 10n ** 18n);
  // It goes on mining, and journalling, after the replay.
  await fundFromFaucet(again.rpcUrl, funded, { to: alice, amount: '1' });
  await again.stop();
  expect(readFileSync(journal, 'utf8').trim().split('\n').length - 1).toBeGreaterThan(Number(head.number));
});

test('a last line cut short by a crash mid-write is dropped (no one saw that block) and the journal goes on after it', async () => {
  appendFileSync(journal, '{"n":9999,"h":"0x12');
  const again = await start();
  expect(again.history).toBe('restored');
  await fundFromFaucet(again.rpcUrl, funded, { to: alice, amount: '1' });
  const head = await block(again, 'latest');
  await again.stop();
  const lines = readFileSync(journal, 'utf8').trim().split('\n');
  const numbers = lines.map((l) => JSON.parse(l).n); // every line whole again
  expect(numbers.at(-1)).toBeGreaterThanOrEqual(Number(head.number));
  expect(numbers).not.toContain(9999);
});

test('a journal that no longer replays to its recorded hashes is set aside, and the chain starts from a new genesis', async () => {
  const recordedGenesis = await start().then(async (c) => {
    const g = await block(c, '0x0');
    await c.stop();
    return g;
  });
  const lines = readFileSync(journal, 'utf8').trim().split('\n');
  const tampered = JSON.parse(lines[3]);
  tampered.t += 1; // block 3 a second later: it and every block after it get other hashes
  lines[3] = JSON.stringify(tampered);
  writeFileSync(journal, `${lines.join('\n')}\n`);
  await new Promise((r) => setTimeout(r, 1_100)); // a new genesis is dated to the second

  const fresh = await start();
  expect(fresh.history).toBe('discarded');
  expect(fresh.discardReason).toMatch(/^block \d+ replayed as 0x[0-9a-f]{64}, recorded 0x[0-9a-f]{64}$/);
  expect((await block(fresh, '0x0')).hash).not.toBe(recordedGenesis.hash);
  expect(BigInt(await balance(fresh))).toBe(0n);
  expect(readdirSync(join(dataDir, 'devchain-31337')).filter((f) => f.startsWith('chain-journal.discarded-'))).toHaveLength(1);
});
