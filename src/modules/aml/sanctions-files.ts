import fs from 'node:fs';
import path from 'node:path';
import type { SanctionList, SanctionsSnapshot } from './sanctions-screen';

/** `sanctioned_addresses_<LIST>.txt`, the upstream project's file naming. */
const LIST_FILE = /^sanctioned_addresses_([A-Za-z0-9_-]+)\.txt$/;
/** The date SOURCE.md states for its snapshot ("snapshot of 2024-09-27"). */
const SNAPSHOT_DATE = /snapshot of (\d{4}-\d{2}-\d{2})/i;

/** The snapshot Keel ships (data/sanctions, found by walking up from this file: works from src/ and dist/). */
export function shippedSanctionsDirectory(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'data', 'sanctions');
    if (fs.existsSync(path.join(candidate, 'SOURCE.md'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error('data/sanctions/SOURCE.md not found: the sanctions snapshot ships with Keel');
  }
}

/** The shapes an address on a list takes, each by its characters and length. */
const ADDRESS_FORMATS = {
  EVM: /^0x[0-9a-fA-F]{40}$/,
  /** Bitcoin and its forks, Tron, Ripple, Solana, Monero, Zcash t-addresses. */
  Base58: /^[1-9A-HJ-NP-Za-km-z]{25,110}$/,
  /** bc1…, ltc1…, zs1…: a human-readable part, 1, then the Bech32 alphabet. */
  Bech32: /^[a-z]{1,20}1[02-9ac-hj-np-z]{6,87}$/i,
  CashAddr: /^(?:bitcoincash:)?[qp][02-9ac-hj-np-z]{41}$/i,
  /** Monero's list carries a 64-hex-digit entry. */
  'hex-64': /^[0-9a-fA-F]{64}$/,
} as const;
type AddressFormat = keyof typeof ADDRESS_FORMATS;

/** The formats of the chains' lists the upstream project publishes (and SOL); any other list (USDT, USDC: tokens on several chains; an operator's own) may hold any of them. */
const LIST_FORMATS: Record<string, AddressFormat[]> = {
  ETH: ['EVM'],
  ARB: ['EVM'],
  BSC: ['EVM'],
  ETC: ['EVM'],
  XBT: ['Base58', 'Bech32'],
  LTC: ['Base58', 'Bech32'],
  BCH: ['Base58', 'CashAddr'],
  BSV: ['Base58'],
  BTG: ['Base58'],
  DASH: ['Base58'],
  XVG: ['Base58'],
  TRX: ['Base58'],
  XRP: ['Base58'],
  SOL: ['Base58'],
  ZEC: ['Base58', 'Bech32'],
  XMR: ['Base58', 'hex-64'],
};

/**
 * One list file's addresses: one a line; blank lines and lines starting with # are skipped. Every
 * other line must look like an address of the list's chain: a saved error page ("404: Not Found",
 * HTML) or a line cut short is refused, naming the first such line and its number.
 */
export function parseListFile(text: string, list: string): string[] {
  const formats = LIST_FORMATS[list] ?? (Object.keys(ADDRESS_FORMATS) as AddressFormat[]);
  const addresses: string[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    if (!formats.some((f) => ADDRESS_FORMATS[f].test(line))) {
      throw new Error(`line ${i + 1} is not an address of the ${list} list (${formats.join(', ')}): ${JSON.stringify(line.length > 60 ? `${line.slice(0, 60)}…` : line)} (an error page or a truncated download?)`);
    }
    addresses.push(line);
  }
  return addresses;
}

/**
 * The lists of `next` that are less than half their namesake in `inUse` (a truncated download?), with
 * both sizes. `replacesAll` (a directory load, which replaces every list): a list in use that `next`
 * lacks (a file that never arrived) counts as shrunk to nothing.
 */
export function shrunkLists(next: SanctionsSnapshot, inUse: SanctionsSnapshot, replacesAll = false): { name: string; entries: number; inUse: number }[] {
  const shrunk = next.lists.flatMap((l) => {
    const current = inUse.lists.find((c) => c.name === l.name)?.addresses.length ?? 0;
    return l.addresses.length * 2 < current ? [{ name: l.name, entries: l.addresses.length, inUse: current }] : [];
  });
  const dropped = replacesAll ? inUse.lists.filter((c) => c.addresses.length > 0 && !next.lists.some((l) => l.name === c.name)) : [];
  return [...shrunk, ...dropped.map((c) => ({ name: c.name, entries: 0, inUse: c.addresses.length }))];
}

/** The list name a file carries in its name, or the name given. */
export function listNameOf(file: string, given?: string): string {
  if (given) return given.toUpperCase();
  const m = LIST_FILE.exec(path.basename(file));
  if (!m) throw new Error(`${path.basename(file)}: name the list with --list (files are named sanctioned_addresses_<LIST>.txt)`);
  return m[1].toUpperCase();
}

/**
 * Reads a directory of `sanctioned_addresses_<LIST>.txt` files (date from its SOURCE.md) or one
 * such file (its list name from the file name unless given).
 */
export function readSanctionsFiles(target: string, options: { list?: string; listDate?: string } = {}): SanctionsSnapshot {
  const stat = fs.statSync(target);
  if (stat.isDirectory()) {
    const files = fs.readdirSync(target).filter((f) => LIST_FILE.test(f)).sort();
    if (files.length === 0) throw new Error(`${target}: no sanctioned_addresses_<LIST>.txt files`);
    const lists: SanctionList[] = files.map((f) => readListFile(path.join(target, f), listNameOf(f)));
    const sourceNote = path.join(target, 'SOURCE.md');
    const noted = fs.existsSync(sourceNote) ? SNAPSHOT_DATE.exec(fs.readFileSync(sourceNote, 'utf8'))?.[1] : undefined;
    return { source: path.resolve(target), listDate: options.listDate ?? noted ?? null, lists };
  }
  return {
    source: path.resolve(target),
    listDate: options.listDate ?? null,
    lists: [readListFile(target, listNameOf(target, options.list))],
  };
}

function readListFile(file: string, name: string): SanctionList {
  try {
    return { name, addresses: parseListFile(fs.readFileSync(file, 'utf8'), name) };
  } catch (error) {
    throw new Error(`${path.basename(file)}: ${(error as Error).message}`);
  }
}

/** The shipped snapshot, described as such. */
export function shippedSanctionsSnapshot(): SanctionsSnapshot {
  const snapshot = readSanctionsFiles(shippedSanctionsDirectory());
  return { ...snapshot, source: 'shipped snapshot (data/sanctions, OFAC SDN digital-currency addresses)' };
}
