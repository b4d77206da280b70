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

/** One list file's addresses: one a line; blank lines and lines starting with # are skipped. */
export function parseListFile(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
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
    const lists: SanctionList[] = files.map((f) => ({ name: listNameOf(f), addresses: parseListFile(fs.readFileSync(path.join(target, f), 'utf8')) }));
    const sourceNote = path.join(target, 'SOURCE.md');
    const noted = fs.existsSync(sourceNote) ? SNAPSHOT_DATE.exec(fs.readFileSync(sourceNote, 'utf8'))?.[1] : undefined;
    return { source: path.resolve(target), listDate: options.listDate ?? noted ?? null, lists };
  }
  return {
    source: path.resolve(target),
    listDate: options.listDate ?? null,
    lists: [{ name: listNameOf(target, options.list), addresses: parseListFile(fs.readFileSync(target, 'utf8')) }],
  };
}

/** The shipped snapshot, described as such. */
export function shippedSanctionsSnapshot(): SanctionsSnapshot {
  const snapshot = readSanctionsFiles(shippedSanctionsDirectory());
  return { ...snapshot, source: 'shipped snapshot (data/sanctions, OFAC SDN digital-currency addresses)' };
}
