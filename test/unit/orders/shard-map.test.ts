import { ShardMap } from '../../../src/modules/orders/shard-map';
import { loadConfig } from '../../../src/platform/config';

describe('markets to shards', () => {
  it('puts a symbol on the same shard whatever its case, on every node (FNV-1a of the upper-case symbol)', () => {
    const a = new ShardMap(16);
    const b = new ShardMap(16);
    for (const symbol of ['ETH-USDC', 'eth-usdc', 'BTC-USDT', 'DAI-USDC']) expect(a.shardOf(symbol)).toBe(b.shardOf(symbol.toUpperCase()));
    // The published FNV-1a: offset basis 0x811c9dc5, prime 0x01000193, xor then multiply per byte.
    let h = 0x811c9dc5;
    for (const byte of Buffer.from('ETH-USDC')) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
    expect(a.shardOf('ETH-USDC')).toBe(h % 16);
  });

  it('spreads symbols over the shards', () => {
    const map = new ShardMap(8);
    const used = new Set(Array.from({ length: 200 }, (_, i) => map.shardOf(`T${i}-USDC`)));
    expect(used.size).toBe(8);
  });

  it('lets ORDERBOOK_SHARD_MAP place a market explicitly, and refuses a shard beyond the count', () => {
    const config = loadConfig({ ORDERBOOK_SHARDS: '4', ORDERBOOK_SHARD_MAP: 'eth-usdc=3, BTC-USDC=0' });
    const map = new ShardMap(config.ORDERBOOK_SHARDS, config.ORDERBOOK_SHARD_MAP);
    expect([map.shardOf('ETH-USDC'), map.shardOf('btc-usdc')]).toEqual([3, 0]);
    expect(() => new ShardMap(2, { 'ETH-USDC': 3 })).toThrow(/only 2 shards/);
    expect(() => loadConfig({ ORDERBOOK_SHARD_MAP: 'ETH-USDC' })).toThrow(/ORDERBOOK_SHARD_MAP/);
  });

  it('reads ORDERBOOK_LEAD_SHARDS and ORDERBOOK_PREFERRED_SHARDS as all, none or a list', () => {
    const map = new ShardMap(4);
    expect(map.parseSelection('all')).toEqual([0, 1, 2, 3]);
    expect(map.parseSelection('none')).toEqual([]);
    expect(map.parseSelection('3, 1,1')).toEqual([1, 3]);
    expect(() => map.parseSelection('4')).toThrow(/ORDERBOOK_LEAD_SHARDS/);
  });
});
