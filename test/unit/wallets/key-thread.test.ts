import { Worker } from 'node:worker_threads';
import { ethers } from 'ethers';
import { ACCOUNT_PATH, KeyThread } from '../../../src/modules/wallets/key-thread';
import { eventually } from '../../support/eventually';

// A fixed, public test phrase (never a real wallet's).
const PHRASE = 'test test test test test test test test test test test junk';
const derivedHere = (index: number) => ethers.HDNodeWallet.fromPhrase(PHRASE, undefined, `${ACCOUNT_PATH}/${index}`);

let thread: KeyThread;
beforeEach(() => {
  thread = new KeyThread();
});
afterEach(() => thread.close());

test('a private key is the BIP-44 key of the phrase at the address index, as ethers derives it', async () => {
  for (const index of [0, 1, 7, 2 ** 31 - 1]) {
    expect(await thread.run('privateKey', { phrase: PHRASE, index })).toBe(derivedHere(index).privateKey);
  }
});

test('an address derives from the account extended public key alone and matches its private key', async () => {
  const accountXpub = ethers.HDNodeWallet.fromPhrase(PHRASE, undefined, ACCOUNT_PATH).neuter().extendedKey;
  for (const index of [0, 3, 1000]) {
    expect(await thread.run('address', { accountXpub, index })).toBe(derivedHere(index).address);
  }
});

test('a new wallet is a fresh 24-word mnemonic whose account key and first address belong to it', async () => {
  const [a, b] = await Promise.all([thread.run('newWallet', {}), thread.run('newWallet', {})]);
  expect(a.phrase).not.toBe(b.phrase);
  expect(a.phrase.split(' ')).toHaveLength(24);
  expect(ethers.Mnemonic.isValidMnemonic(a.phrase)).toBe(true);
  const account = ethers.HDNodeWallet.fromPhrase(a.phrase, undefined, ACCOUNT_PATH);
  expect(a.accountXpub).toBe(account.neuter().extendedKey);
  expect(a.walletAddress).toBe(account.deriveChild(0).address);
});

test('derivations run off the event loop: a timer set before them fires before the first answer', async () => {
  const order: string[] = [];
  setTimeout(() => order.push('timer'), 0);
  await Promise.all(Array.from({ length: 5 }, (_, index) => thread.run('privateKey', { phrase: PHRASE, index }).then(() => order.push(`key ${index}`))));
  expect(order[0]).toBe('timer');
  expect(order.slice(1)).toEqual(['key 0', 'key 1', 'key 2', 'key 3', 'key 4']);
});

test('a phrase that is not a mnemonic is refused without the phrase in the error', async () => {
  const secret = 'correct horse battery staple correct horse battery staple';
  const refusal = await thread.run('privateKey', { phrase: secret, index: 0 }).catch((e: Error) => e);
  expect(refusal).toBeInstanceOf(Error);
  expect((refusal as Error).message).toMatch(/^HD key derivation failed \(\w+\)$/);
  expect((refusal as Error).message).not.toContain('horse');
  // The thread keeps serving after a refusal.
  expect(await thread.run('privateKey', { phrase: PHRASE, index: 2 })).toBe(derivedHere(2).privateKey);
});

test('closing refuses the jobs still waiting; the next job starts a thread again', async () => {
  const waiting = thread.run('privateKey', { phrase: PHRASE, index: 0 });
  await thread.close();
  await expect(waiting).rejects.toThrow('the key thread was closed');
  expect(await thread.run('privateKey', { phrase: PHRASE, index: 0 })).toBe(derivedHere(0).privateKey);
});

test('an idle thread ends by itself and a later job starts another', async () => {
  const short = new KeyThread(20);
  const terminate = jest.spyOn(Worker.prototype, 'terminate');
  try {
    expect(await short.run('address', { accountXpub: ethers.HDNodeWallet.fromPhrase(PHRASE, undefined, ACCOUNT_PATH).neuter().extendedKey, index: 1 })).toBe(derivedHere(1).address);
    await eventually(() => terminate.mock.calls.length > 0, 10_000, 20);
    expect(terminate).toHaveBeenCalledTimes(1);
    expect(await short.run('privateKey', { phrase: PHRASE, index: 1 })).toBe(derivedHere(1).privateKey);
  } finally {
    terminate.mockRestore();
    await short.close();
  }
});
