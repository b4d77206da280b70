/**
 * What an SPL mint says of itself, read from account data: its decimals, and a name and symbol from
 * its metadata when it has one: the Token-2022 metadata extension kept in the mint, or else the
 * Metaplex token-metadata account of the mint. Neither: empty strings. The strings are the token
 * creator's: control characters are dropped and each is cut at MAX_METADATA_CHARS.
 */
import { Address, address, getAddressDecoder, getAddressEncoder, getProgramDerivedAddress } from '@solana/kit';

export const TOKEN_PROGRAM = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
export const TOKEN_2022_PROGRAM = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
export const METAPLEX_METADATA_PROGRAM = address('metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s');

export const MAX_METADATA_CHARS = 128;

export interface SplTokenFacts {
  decimals: number;
  /** '' when the token has no readable metadata. */
  name: string;
  symbol: string;
}

const MINT_SIZE = 82;
/** Token-2022: extensions follow the 165-byte base (a mint's padded to it), then one account-type byte (1: mint). */
const EXTENSIONS_AT = 166;
const ACCOUNT_TYPE_MINT = 1;
const EXTENSION_TOKEN_METADATA = 19;
const METAPLEX_KEY_METADATA_V1 = 4;

/**
 * A mint's decimals and (Token-2022) its metadata extension; null for anything that is not an
 * initialised mint of the Token or Token-2022 program. `metadata` undefined: the mint carries none.
 */
export function decodeMint(owner: string, data: Uint8Array): { decimals: number; metadata?: { name: string; symbol: string } } | null {
  if (owner !== TOKEN_PROGRAM && owner !== TOKEN_2022_PROGRAM) return null;
  const isMint = data.length === MINT_SIZE || (owner === TOKEN_2022_PROGRAM && data.length > EXTENSIONS_AT && data[EXTENSIONS_AT - 1] === ACCOUNT_TYPE_MINT);
  if (!isMint || data[45] !== 1) return null;
  const decimals = data[44];
  const metadata = owner === TOKEN_2022_PROGRAM ? token2022Metadata(data) : undefined;
  return metadata ? { decimals, metadata } : { decimals };
}

/** Token-2022 keeps no account or mint at the multisig's size (it pads them), so that size is a multisig's. */
const MULTISIG_SIZE = 355;
const TOKEN_ACCOUNT_SIZE = 165;
const ACCOUNT_TYPE_ACCOUNT = 2;

/**
 * The mint and owner of an initialised token account of the Token or Token-2022 program; null for
 * anything else (a mint, a multisig, an account of another program).
 */
export function decodeTokenAccount(owner: string, data: Uint8Array): { mint: Address; owner: Address } | null {
  if (owner !== TOKEN_PROGRAM && owner !== TOKEN_2022_PROGRAM) return null;
  const isAccount = data.length === TOKEN_ACCOUNT_SIZE || (owner === TOKEN_2022_PROGRAM && data.length > TOKEN_ACCOUNT_SIZE && data.length !== MULTISIG_SIZE && data[TOKEN_ACCOUNT_SIZE] === ACCOUNT_TYPE_ACCOUNT);
  // Its state at byte 108: 1 initialised, 2 frozen (0: not initialised).
  if (!isAccount || (data[108] !== 1 && data[108] !== 2)) return null;
  const decoder = getAddressDecoder();
  return { mint: decoder.decode(data.subarray(0, 32)), owner: decoder.decode(data.subarray(32, 64)) };
}

/** The TokenMetadata extension's name and symbol (after its update authority and mint), from the mint's TLV entries. */
function token2022Metadata(data: Uint8Array): { name: string; symbol: string } | undefined {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let at = EXTENSIONS_AT; at + 4 <= data.length; ) {
    const type = view.getUint16(at, true);
    const length = view.getUint16(at + 2, true);
    if (type === 0) return undefined;
    if (type === EXTENSION_TOKEN_METADATA) return nameAndSymbol(data.subarray(at + 4, at + 4 + length), 64);
    at += 4 + length;
  }
  return undefined;
}

/** The Metaplex metadata account's address for a mint. */
export async function metaplexMetadataAddress(mint: string): Promise<Address> {
  const encoder = getAddressEncoder();
  const [pda] = await getProgramDerivedAddress({
    programAddress: METAPLEX_METADATA_PROGRAM,
    seeds: ['metadata', encoder.encode(METAPLEX_METADATA_PROGRAM), encoder.encode(address(mint))],
  });
  return pda;
}

/** Name and symbol of a Metaplex metadata account (key, update authority, mint, then name and symbol padded with NULs); undefined if it is not one. */
export function decodeMetaplexMetadata(owner: string, data: Uint8Array): { name: string; symbol: string } | undefined {
  if (owner !== METAPLEX_METADATA_PROGRAM || data[0] !== METAPLEX_KEY_METADATA_V1) return undefined;
  return nameAndSymbol(data, 65);
}

/** Two Borsh strings (u32 length, UTF-8) from `at`: name then symbol; undefined when they run past the data. */
function nameAndSymbol(data: Uint8Array, at: number): { name: string; symbol: string } | undefined {
  const name = borshString(data, at);
  const symbol = name && borshString(data, name.next);
  return name && symbol ? { name: name.text, symbol: symbol.text } : undefined;
}

function borshString(data: Uint8Array, at: number): { text: string; next: number } | undefined {
  if (at + 4 > data.length) return undefined;
  const length = new DataView(data.buffer, data.byteOffset + at, 4).getUint32(0, true);
  if (at + 4 + length > data.length) return undefined;
  const raw = new TextDecoder().decode(data.subarray(at + 4, at + 4 + length));
  // eslint-disable-next-line no-control-regex
  return { text: [...raw.replace(/[\u0000-\u001f\u007f]/g, '').trim()].slice(0, MAX_METADATA_CHARS).join(''), next: at + 4 + length };
}
