import { Tier, TIERS } from '../auth/permissions';

/**
 * Requests an organisation may make per UTC calendar month, by its tier, across all its keys, both
 * hosts and every node: 30 days of one key's daily rate limit (TIER_LIMITS.perDay), so a single key
 * kept at its daily ceiling fits the month while an organisation spreading its load over several
 * keys meets the quota. An operator raises one organisation's with `keel quota set`.
 */
export const TIER_MONTHLY_QUOTAS: Record<Tier, number> = {
  Starter: 300_000,
  Pro: 3_000_000,
  Business: 30_000_000,
};

/** The largest quota (GraphQL's Int): far above any tier's, and what the API can report. */
export const MAX_MONTHLY_QUOTA = 2_147_483_647;

/** `Starter=1000,Business=50000`: the tiers named replace their default, the others keep it. */
export function parseTierQuotas(text: string): Record<Tier, number> {
  const quotas = { ...TIER_MONTHLY_QUOTAS };
  for (const entry of text.split(',').map((e) => e.trim()).filter(Boolean)) {
    const [tier, value] = entry.split('=').map((x) => x.trim());
    const n = Number(value);
    if (!TIERS.includes(tier as Tier) || !Number.isSafeInteger(n) || n < 1 || n > MAX_MONTHLY_QUOTA) {
      throw new Error(`'${entry}': expected Tier=requests (Starter, Pro or Business; 1 to ${MAX_MONTHLY_QUOTA})`);
    }
    quotas[tier as Tier] = n;
  }
  return quotas;
}
