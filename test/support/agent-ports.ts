import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecipientScreen } from '../../src/modules/agents/agent-ports';
import type { SanctionMatch } from '../../src/modules/aml/sanctions-screen';
import type { PriceSource } from '../../src/modules/prices/price-source';

/**
 * Small real stand-ins for the aml and prices modules' services, shaped as they are, for agent
 * tests until those modules are wired into services.ts (then the tests use the real ones).
 */

/** Screens against list files in `dir` as the shipped snapshot lays them out: sanctioned_addresses_<LIST>.txt, one address a line. */
export function listFileScreen(dir: string): RecipientScreen {
  const index = new Map<string, SanctionMatch[]>();
  for (const file of readdirSync(dir)) {
    const m = /^sanctioned_addresses_(.+)\.txt$/.exec(file);
    if (!m) continue;
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const address = line.trim();
      if (!address) continue;
      const key = address.toLowerCase();
      index.set(key, [...(index.get(key) ?? []), { list: m[1], address }]);
    }
  }
  return {
    screen(address) {
      const matches = index.get(address.trim().toLowerCase()) ?? [];
      return { address, sanctioned: matches.length > 0, matches };
    },
  };
}

/** Prices from a configured table keyed by asset id; an asset not in it has no price (null, with the reason). */
export function referencePriceSource(table: Record<string, string>): PriceSource {
  return {
    async price(blockchain, asset) {
      const priceUsd = table[asset] ?? null;
      return priceUsd === null
        ? { blockchain, asset, priceUsd: null, source: 'none', asOf: null, unavailableReason: 'no reference price configured' }
        : { blockchain, asset, priceUsd, source: 'reference', asOf: new Date() };
    },
  };
}
