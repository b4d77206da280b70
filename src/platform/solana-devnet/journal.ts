/**
 * The sandbox Solana network's memory across restarts: an append-only journal (JSON lines) of
 * every transaction that landed (its slot, the slot's time and its wire bytes), of rollbacks, and of
 * slot leases. A line is written before the transaction's sender is answered, so nothing anyone
 * was told about is lost by a crash. On start the journal is replayed into a fresh ledger from the
 * same genesis: blockhashes are a hash chain of slots and signatures, so the blocks come back with
 * the same hashes. Empty slots are not written one by one: a lease line says how far slots may have
 * been produced, and a restart seals empty blocks up to it, so no slot number a client saw as empty
 * can come back holding a transaction.
 */
import fs from 'node:fs';

export const SOLANA_JOURNAL_FILE = 'solana-journal.jsonl';

export interface SolanaJournalHeader {
  journal: 1;
  network: 'keel-solana-devnet';
  genesisTimeMs: number;
  confirmedLag: number;
  finalizedLag: number;
}

export type JournalEntry =
  | { s: number; t: number; tx: string }
  | { lease: number }
  | { rollback: number; at: number; t: number };

export interface JournalContents {
  header: SolanaJournalHeader;
  entries: JournalEntry[];
}

/** The journal's header and entries; undefined when there is none; throws when it is unreadable. */
export function readSolanaJournal(file: string): JournalContents | undefined {
  if (!fs.existsSync(file)) return undefined;
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const header = JSON.parse(lines[0]) as SolanaJournalHeader;
  if (header.journal !== 1 || header.network !== 'keel-solana-devnet') throw new Error('not a Keel Solana devnet journal');
  const entries: JournalEntry[] = [];
  for (const line of lines.slice(1)) {
    if (!line) continue;
    try {
      entries.push(JSON.parse(line) as JournalEntry);
    } catch {
      // The last line was cut short by a crash mid-write: nobody was answered about it.
      break;
    }
  }
  return { header, entries };
}

export class SolanaJournal {
  constructor(private readonly file: string) {}

  /** Starts a new journal (write and rename: a crash leaves the old one or the new one). */
  create(header: SolanaJournalHeader, entries: JournalEntry[] = []): void {
    const tmp = `${this.file}.tmp`;
    fs.writeFileSync(tmp, [header, ...entries].map((e) => `${JSON.stringify(e)}\n`).join(''));
    fs.renameSync(tmp, this.file);
  }

  append(entry: JournalEntry): void {
    fs.appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
  }

  /** Moves an unusable journal aside; answers where it went. */
  setAside(): string {
    const aside = this.file.replace(/\.jsonl$/, `.discarded-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`);
    fs.renameSync(this.file, aside);
    return aside;
  }
}
