/**
 * The shape of sanctions screening results. The screening itself (the lists, the hashed set) is the
 * aml module's; agent payments depend on these types only.
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
