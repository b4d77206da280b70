import { getMintEncoder } from '@solana-program/token';
import { address, getAddressEncoder, none, some } from '@solana/kit';
import {
  MAX_METADATA_CHARS,
  METAPLEX_METADATA_PROGRAM,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  decodeMetaplexMetadata,
  decodeMint,
} from '../../../src/platform/chain-port/spl-token-facts';

const MINT = address('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU');
const AUTHORITY = address('9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM');

const borsh = (s: string, padTo = 0) => {
  const bytes = new TextEncoder().encode(s.padEnd(padTo, '\0'));
  const out = new Uint8Array(4 + bytes.length);
  new DataView(out.buffer).setUint32(0, bytes.length, true);
  out.set(bytes, 4);
  return out;
};
const concat = (...parts: ArrayLike<number>[]) => Uint8Array.from(parts.flatMap((p) => Array.from(p)));
const u16 = (n: number) => [n & 0xff, n >> 8];
const mintBase = (decimals: number) => new Uint8Array(getMintEncoder().encode({ mintAuthority: some(AUTHORITY), supply: 5n, decimals, isInitialized: true, freezeAuthority: none() }));
const key = (a: string) => getAddressEncoder().encode(address(a));

/** A Token-2022 mint: the 82-byte base padded to 165, the account type (1), then TLV extensions. */
function token2022Mint(decimals: number, extensions: [type: number, value: Uint8Array][]): Uint8Array {
  const base = new Uint8Array(165);
  base.set(mintBase(decimals));
  return concat(base, [1], ...extensions.flatMap(([type, value]) => [u16(type), u16(value.length), value]));
}

describe('SPL token facts from account data', () => {
  test('a Token mint: its decimals, no metadata of its own', () => {
    expect(decodeMint(TOKEN_PROGRAM, mintBase(9))).toEqual({ decimals: 9 });
  });

  test('a Token-2022 mint: the metadata extension read past other extensions (a MetadataPointer first)', () => {
    const pointer = concat(new Uint8Array(32), key(MINT));
    const metadata = concat(key(AUTHORITY), key(MINT), borsh('Stray Token'), borsh('STRAY'), borsh('https://x.invalid/m.json'), [0, 0, 0, 0]);
    expect(decodeMint(TOKEN_2022_PROGRAM, token2022Mint(2, [[18, pointer], [19, metadata]]))).toEqual({ decimals: 2, metadata: { name: 'Stray Token', symbol: 'STRAY' } });
    expect(decodeMint(TOKEN_2022_PROGRAM, token2022Mint(4, [[18, pointer]]))).toEqual({ decimals: 4 });
    expect(decodeMint(TOKEN_2022_PROGRAM, mintBase(0))).toEqual({ decimals: 0 });
  });

  test('not a mint: another program, a token account, an uninitialised mint; metadata that runs past the data is none', () => {
    expect(decodeMint(AUTHORITY, mintBase(6))).toBeNull();
    expect(decodeMint(TOKEN_PROGRAM, new Uint8Array(165))).toBeNull();
    const tokenAccount2022 = concat(new Uint8Array(165), [2], u16(7), u16(0));
    expect(decodeMint(TOKEN_2022_PROGRAM, tokenAccount2022)).toBeNull();
    const uninitialised = mintBase(6);
    uninitialised[45] = 0;
    expect(decodeMint(TOKEN_PROGRAM, uninitialised)).toBeNull();
    const truncated = concat(key(AUTHORITY), key(MINT), [200, 0, 0, 0], new TextEncoder().encode('short'));
    expect(decodeMint(TOKEN_2022_PROGRAM, token2022Mint(6, [[19, truncated]]))).toEqual({ decimals: 6 });
  });

  test('a Metaplex metadata account: name and symbol with the NUL padding and control characters dropped, cut at the limit', () => {
    const account = (name: string, symbol: string) => concat([4], key(AUTHORITY), key(MINT), borsh(name, 32), borsh(symbol, 10), borsh('https://x.invalid', 200), [0, 0]);
    expect(decodeMetaplexMetadata(METAPLEX_METADATA_PROGRAM, account('Wrapped Thing', 'WTH'))).toEqual({ name: 'Wrapped Thing', symbol: 'WTH' });
    expect(decodeMetaplexMetadata(METAPLEX_METADATA_PROGRAM, account('Bell\u0007 Token\n', 'B\u0000L'))).toEqual({ name: 'Bell Token', symbol: 'BL' });
    expect(decodeMetaplexMetadata(AUTHORITY, account('Wrapped Thing', 'WTH'))).toBeUndefined();
    const long = concat([4], key(AUTHORITY), key(MINT), borsh('x'.repeat(500)), borsh('Y'));
    expect(decodeMetaplexMetadata(METAPLEX_METADATA_PROGRAM, long)?.name).toHaveLength(MAX_METADATA_CHARS);
  });
});
