/**
 * Which shard a market belongs to: the explicit map when it names the market, otherwise the
 * 32-bit FNV-1a hash of the market's (upper-case) symbol modulo the shard count. Stable across
 * nodes and restarts as long as every node has the same ORDERBOOK_SHARDS and ORDERBOOK_SHARD_MAP.
 */
export class ShardMap {
  constructor(
    readonly count: number,
    private readonly explicit: Readonly<Record<string, number>> = {},
  ) {
    for (const [symbol, shard] of Object.entries(explicit)) {
      if (shard >= count) throw new Error(`ORDERBOOK_SHARD_MAP puts ${symbol} on shard ${shard}, but there are only ${count} shards (0-${count - 1})`);
    }
  }

  shardOf(symbol: string): number {
    const key = symbol.toUpperCase();
    return this.explicit[key] ?? fnv1a(key) % this.count;
  }

  /** Every shard number, 0 to count - 1. */
  all(): number[] {
    return Array.from({ length: this.count }, (_, i) => i);
  }

  /** The shards named by ORDERBOOK_LEAD_SHARDS: `all`, `none` or a list of numbers. */
  parseSelection(text: string): number[] {
    const t = text.trim().toLowerCase();
    if (t === 'all' || t === '') return this.all();
    if (t === 'none') return [];
    const shards = t.split(',').map((s) => Number(s.trim()));
    const bad = shards.find((n) => !Number.isInteger(n) || n < 0 || n >= this.count);
    if (bad !== undefined) throw new Error(`ORDERBOOK_LEAD_SHARDS: '${text}' must be all, none or shard numbers from 0 to ${this.count - 1}`);
    return [...new Set(shards)].sort((a, b) => a - b);
  }
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}
