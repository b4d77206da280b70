/**
 * In-process sanctions screening: the lists in use held in one hashed Map keyed by the
 * normalised address, so a check is one string normalisation and one lookup (synchronous, no I/O).
 *
 * EVM addresses (0x + 40 hex) are compared lower-cased, and one EVM address may be filed under
 * ETH, ARB, BSC, USDT, USDC (or ETC): every list's EVM entries share the one key space, so an
 * address matches whichever lists carry it. Bech32 addresses (bc1…, ltc1…) and Bitcoin Cash
 * CashAddr (q…/p…, with or without `bitcoincash:`), whose case carries no meaning, are compared
 * lower-cased too, but only when written in one case (BIP-173: a mixed-case Bech32 string is not
 * Bech32), so a Base58 address that happens to look like one (a Solana address can start `tb1`)
 * stays exact. Other formats (Base58 Bitcoin, Solana, Tron, Monero, …) are case-sensitive and
 * compared exactly as written (surrounding whitespace trimmed).
 */

/** One list entry that matched: the list's name (e.g. ETH, XBT) and the address as the list writes it. */
export interface SanctionMatch {
  list: string;
  address: string;
}

export interface ScreeningResult {
  /** The address as the caller gave it. */
  address: string;
  sanctioned: boolean;
  matches: SanctionMatch[];
}

/** One named list of a snapshot (e.g. ETH) and its addresses as published. */
export interface SanctionList {
  name: string;
  addresses: string[];
}

/** A complete set of lists: what is screened against, where it came from and its date. */
export interface SanctionsSnapshot {
  /** Where the lists came from (e.g. "shipped snapshot data/sanctions" or "loaded 2026-11-23 from …"). */
  source: string;
  /** The date the lists were published (YYYY-MM-DD), when known. */
  listDate: string | null;
  lists: SanctionList[];
}

/** What is in use, for operators and API callers: source, date, sizes. */
export interface SanctionsListInfo {
  source: string;
  listDate: string | null;
  /** When this process started screening against it. */
  activeSince: Date;
  /** Distinct normalised addresses across all lists. */
  addressCount: number;
  lists: { name: string; entries: number }[];
}

const BECH32_ADDRESS = /^(?:bc|ltc|tb)1[02-9ac-hj-np-z]{6,87}$/i;
const CASHADDR = /^(?:bitcoincash:)?([qp][02-9ac-hj-np-z]{41})$/i;

/** Written in one case (Bech32 and CashAddr are; a Base58 address almost never is). */
const oneCase = (s: string) => s === s.toLowerCase() || s === s.toUpperCase();

/** The key an address is screened under: EVM, Bech32 and CashAddr lower-cased, everything else (Solana's Base58 too) as written. */
export function normaliseAddress(address: string): string {
  const trimmed = address.trim();
  // 0x + 40 characters: lower-cased without a pattern test (nothing else on any list starts with 0x).
  if (trimmed.length === 42 && trimmed.charCodeAt(0) === 0x30 && (trimmed.charCodeAt(1) | 0x20) === 0x78) return trimmed.toLowerCase();
  // Only addresses that can be Bech32 or CashAddr go through those patterns (their first letter says).
  const first = trimmed.charCodeAt(0) | 0x20;
  if ((first === 0x62 || first === 0x6c || first === 0x74) && BECH32_ADDRESS.test(trimmed) && oneCase(trimmed)) return trimmed.toLowerCase();
  if (first === 0x71 || first === 0x70 || first === 0x62) {
    const cash = CASHADDR.exec(trimmed);
    if (cash && oneCase(cash[1])) return cash[1].toLowerCase();
  }
  return trimmed;
}

interface Index {
  byAddress: Map<string, SanctionMatch[]>;
  info: SanctionsListInfo;
}

function indexSnapshot(snapshot: SanctionsSnapshot): Index {
  const byAddress = new Map<string, SanctionMatch[]>();
  const lists: SanctionsListInfo['lists'] = [];
  for (const list of snapshot.lists) {
    let entries = 0;
    for (const raw of list.addresses) {
      const address = raw.trim();
      if (!address) continue;
      entries++;
      const key = normaliseAddress(address);
      const match: SanctionMatch = Object.freeze({ list: list.name, address });
      const existing = byAddress.get(key);
      if (!existing) byAddress.set(key, [match]);
      else if (!existing.some((m) => m.list === list.name)) existing.push(match);
    }
    lists.push({ name: list.name, entries });
  }
  return {
    byAddress,
    info: { source: snapshot.source, listDate: snapshot.listDate, activeSince: new Date(), addressCount: byAddress.size, lists },
  };
}

export class SanctionsScreen {
  private index: Index;

  constructor(snapshot: SanctionsSnapshot) {
    this.index = indexSnapshot(snapshot);
  }

  /** Screens one address against every list in use. Never throws; an empty or malformed address is simply not listed. */
  screen(address: string): ScreeningResult {
    const matches = this.index.byAddress.get(normaliseAddress(address));
    return matches ? { address, sanctioned: true, matches: matches.slice() } : { address, sanctioned: false, matches: [] };
  }

  /** True when the address is on any list (screen without building the result). */
  isSanctioned(address: string): boolean {
    return this.index.byAddress.has(normaliseAddress(address));
  }

  /** Swaps in another set of lists atomically (a newer list loaded with `keel aml load`). */
  replace(snapshot: SanctionsSnapshot): void {
    this.index = indexSnapshot(snapshot);
  }

  /** The lists in use. */
  info(): SanctionsListInfo {
    return this.index.info;
  }
}
