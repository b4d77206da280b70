/**
 * Solana keys: SLIP-0010 ed25519 derivation on the key thread, checked against the published
 * SLIP-0010 test vectors for ed25519 (vector 1 and 2, private and public keys at every path), the
 * Solana path m/44'/501'/i'/0' of a BIP-39 phrase, and master wallets' Solana keys sealed like the
 * EVM ones (bound to the wallet id) and signing as their address.
 */
import { randomBytes } from 'node:crypto';
import { getUtf8Encoder, isAddress, verifySignature, getPublicKeyFromAddress } from '@solana/kit';
import { KeyThread, solanaPath } from '../../../src/modules/wallets/key-thread';
import { WalletKeys } from '../../../src/modules/wallets/wallet-keys';
import { SecretBox } from '../../../src/platform/crypto/secret-box';

/** SLIP-0010, "Test vector 1 for ed25519" and "Test vector 2 for ed25519": [path, private key, public key (without the 00 prefix)]. */
const VECTORS: { seed: string; cases: [string, string, string][] }[] = [
  {
    seed: '000102030405060708090a0b0c0d0e0f',
    cases: [
      ['m', '2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7', 'a4b2856bfec510abab89753fac1ac0e1112364e7d250545963f135f2a33188ed'],
      ["m/0'", '68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3', '8c8a13df77a28f3445213a0f432fde644acaa215fc72dcdf300d5efaa85d350c'],
      ["m/0'/1'", 'b1d0bad404bf35da785a64ca1ac54b2617211d2777696fbffaf208f746ae84f2', '1932a5270f335bed617d5b935c80aedb1a35bd9fc1e31acafd5372c30f5c1187'],
      ["m/0'/1'/2'", '92a5b23c0b8a99e37d07df3fb9966917f5d06e02ddbd909c7e184371463e9fc9', 'ae98736566d30ed0e9d2f4486a64bc95740d89c7db33f52121f8ea8f76ff0fc1'],
      ["m/0'/1'/2'/2'", '30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662', '8abae2d66361c879b900d204ad2cc4984fa2aa344dd7ddc46007329ac76c429c'],
      ["m/0'/1'/2'/2'/1000000000'", '8f94d394a8e8fd6b1bc2f3f49f5c47e385281d5c17e65324b0f62483e37e8793', '3c24da049451555d51a7014a37337aa4e12d41e485abccfa46b47dfb2af54b7a'],
    ],
  },
  {
    seed: 'fffcf9f6f3f0edeae7e4e1dedbd8d5d2cfccc9c6c3c0bdbab7b4b1aeaba8a5a29f9c999693908d8a8784817e7b7875726f6c696663605d5a5754514e4b484542',
    cases: [
      ['m', '171cb88b1b3c1db25add599712e36245d75bc65a1a5c9e18d76f9f2b1eab4012', '8fe9693f8fa62a4305a140b9764c5ee01e455963744fe18204b4fb948249308a'],
      ["m/0'", '1559eb2bbec5790b0c65d8693e4d0875b1747f4970ae8b650486ed7470845635', '86fab68dcb57aa196c77c5f264f215a112c22a912c10d123b0d03c3c28ef1037'],
      ["m/0'/2147483647'", 'ea4f5bfe8694d8bb74b7b59404632fd5968b774ed545e810de9c32a4fb4192f4', '5ba3b9ac6e90e83effcd25ac4e58a1365a9e35a3d3ae5eb07b9e4d90bcf7506d'],
      ["m/0'/2147483647'/1'", '3757c7577170179c7868353ada796c839135b3d30554bbb74a4b1e4a5a58505c', '2e66aa57069c86cc18249aecf5cb5a9cebbfd6fadeab056254763874a9352b45'],
      ["m/0'/2147483647'/1'/2147483646'", '5837736c89570de861ebc173b1086da4f505d4adb387c6a1b1342d5e4ac9ec72', 'e33c0f7d81d843c572275f287498e8d408654fdf0d1e065b84e2e6f157aab09b'],
      ["m/0'/2147483647'/1'/2147483646'/2'", '551d333177df541ad876a60ea71f00447931c0a9da16f227c11ea080d7391b8d', '47150c75db263559a70d5778bf36abbab30fb061ad69f69ece61a72b0cfa4fc0'],
    ],
  },
];

/** The BIP-39 test phrase whose first Solana account (m/44'/501'/0'/0') is widely published. */
const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const ABANDON_FIRST_SOLANA_ADDRESS = 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk';

let thread: KeyThread;
beforeEach(() => {
  thread = new KeyThread();
});
afterEach(() => thread.close());

test.each(VECTORS.flatMap((v, i) => v.cases.map(([path, priv, pub]) => [i + 1, path, v.seed, priv, pub])))(
  'SLIP-0010 ed25519 test vector %i, %s',
  async (_n, path, seedHex, privateKey, publicKey) => {
    expect(await thread.run('ed25519FromSeed', { seedHex: seedHex as string, path: path as string })).toEqual({ privateKey, publicKey });
  },
);

test("Solana's path is m/44'/501'/i'/0', hardened at every level, indexes below 2^31 only", () => {
  expect(solanaPath(0)).toBe("m/44'/501'/0'/0'");
  expect(solanaPath(7)).toBe("m/44'/501'/7'/0'");
  for (const bad of [-1, 1.5, 2 ** 31]) expect(() => solanaPath(bad)).toThrow(/invalid Solana key index/);
});

test('a phrase derives the Solana account that wallets derive from it', async () => {
  const { publicKey } = await thread.run('ed25519FromPhrase', { phrase: ABANDON, path: solanaPath(0) });
  const { getAddressDecoder } = await import('@solana/kit');
  expect(getAddressDecoder().decode(Buffer.from(publicKey, 'hex'))).toBe(ABANDON_FIRST_SOLANA_ADDRESS);
});

test('a phrase that is not a mnemonic is refused without the phrase in the error', async () => {
  const refusal = await thread.run('ed25519FromPhrase', { phrase: 'correct horse battery staple', path: solanaPath(0) }).catch((e: Error) => e);
  expect((refusal as Error).message).toMatch(/^HD key derivation failed \(\w+\)$/);
  expect((refusal as Error).message).not.toContain('horse');
});

describe('master wallets\' Solana keys', () => {
  const box = new SecretBox(randomBytes(32));
  let keys: WalletKeys;
  beforeEach(() => {
    keys = new WalletKeys(box, new KeyThread());
  });
  afterEach(() => keys.close());

  test('a new Solana wallet is a sealed 24-word mnemonic, bound to its wallet id, whose index 0 is the wallet address', async () => {
    const created = await keys.createSolana('wallet-1');
    expect(isAddress(created.walletAddress)).toBe(true);
    expect(created.sealedMnemonic).not.toMatch(/\b[a-z]+ [a-z]+ [a-z]+\b/);
    expect(box.open(created.sealedMnemonic, 'wallet-1').split(' ')).toHaveLength(24);
    expect(() => box.open(created.sealedMnemonic, 'wallet-2')).toThrow();
    expect(await keys.solanaAddressAt('wallet-1', created.sealedMnemonic, 0)).toBe(created.walletAddress);
    await expect(keys.solanaAddressAt('wallet-2', created.sealedMnemonic, 0)).rejects.toThrow();
    const other = await keys.createSolana('wallet-2');
    expect(other.walletAddress).not.toBe(created.walletAddress);
  });

  test('deposit addresses are distinct per index, and the signer of an index signs as that address', async () => {
    const sealed = box.seal(ABANDON, 'w');
    const addresses = await Promise.all([0, 1, 2, 3].map((i) => keys.solanaAddressAt('w', sealed, i)));
    expect(addresses[0]).toBe(ABANDON_FIRST_SOLANA_ADDRESS);
    expect(new Set(addresses).size).toBe(4);
    const signer = await keys.solanaSigner('w', sealed, 2);
    expect(signer.address).toBe(addresses[2]);
    const message = new Uint8Array(getUtf8Encoder().encode('keel'));
    const [signed] = await signer.signMessages([{ content: message, signatures: {} }]);
    const signature = signed[signer.address]!;
    expect(await verifySignature(await getPublicKeyFromAddress(addresses[2]), signature, message)).toBe(true);
    expect(signer.keyPair.privateKey.extractable).toBe(false);
  });
});
