import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../../src/platform/config';
import { parseRoles } from '../../../src/app';
import { parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { ShardMap } from '../../../src/modules/orders/shard-map';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { predictTestTokenAddresses } from '../../../src/platform/chain/test-tokens';

// js-yaml ships no types of its own; load() is all this needs.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml: { load(text: string): unknown } = require('js-yaml');

interface Service {
  profiles?: string[];
  command?: string[];
  environment?: Record<string, string>;
  network_mode?: string;
  ports?: string[];
}

const compose = yaml.load(readFileSync(join(__dirname, '..', '..', '..', 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service> };
const cluster = ['keel-1', 'keel-2', 'keel-3'].map((name) => ({ name, service: compose.services[name] }));
const configOf = (s: Service) => loadConfig({ ...s.environment });
const rolesOf = (s: Service) => parseRoles(s.command![s.command!.indexOf('--roles') + 1]);

describe('docker-compose.yml, profile cluster: the README three-node layout', () => {
  it('runs three Keel processes on one PostgreSQL and one Redis, only under the cluster profile', () => {
    for (const { service } of cluster) {
      expect(service.profiles).toEqual(['cluster']);
      const config = configOf(service);
      expect(config.DATABASE_URL).toBe('postgres://postgres@postgres:5432/keel');
      expect(config.REDIS_URL).toBe('redis://redis:6379');
    }
    expect(compose.services.keel.profiles).toBeUndefined();
  });

  it('gives keel-1 every role and keel-2 and keel-3 the order book, under distinct node ids and pro ports, all published', () => {
    expect(cluster.map(({ service }) => [...rolesOf(service)].sort())).toEqual([['api', 'orderbook', 'worker'], ['orderbook'], ['orderbook']]);
    const configs = cluster.map(({ service }) => configOf(service));
    expect(configs.map((c) => c.KEEL_NODE_ID)).toEqual(['keel-1', 'keel-2', 'keel-3']);
    const proPorts = configs.map((c) => c.PRO_PORT);
    expect(new Set(proPorts).size).toBe(3);
    const published = cluster[0].service.ports!.map((p) => Number(p.split(':').pop()));
    expect(published).toEqual(expect.arrayContaining([configs[0].CORE_PORT, ...proPorts]));
    for (const { service } of cluster.slice(1)) expect(service.network_mode).toBe('service:keel-1');
  });

  it('spreads the shards over the three nodes (each preferred by exactly one), with the same shard settings everywhere', () => {
    const configs = cluster.map(({ service }) => configOf(service));
    expect(new Set(configs.map((c) => `${c.ORDERBOOK_SHARDS}|${JSON.stringify(c.ORDERBOOK_SHARD_MAP)}`)).size).toBe(1);
    const shards = new ShardMap(configs[0].ORDERBOOK_SHARDS, configs[0].ORDERBOOK_SHARD_MAP);
    const preferred = configs.flatMap((c) => shards.parseSelection(c.ORDERBOOK_PREFERRED_SHARDS));
    expect(preferred.sort((a, b) => a - b)).toEqual(shards.all());
    for (const c of configs) expect(shards.parseSelection(c.ORDERBOOK_LEAD_SHARDS)).toEqual(shards.all());
  });

  it("points keel-2 and keel-3 at keel-1's dev chains and test tokens as keel-1 deploys them", () => {
    const tokens = predictTestTokenAddresses(devChainAccount(0).address);
    for (const { service } of cluster.slice(1)) {
      const chains = parseChainsConfig(service.environment!.KEEL_CHAINS);
      expect(chains.map((c) => [c.chainId, c.rpcUrl])).toEqual([
        [31337, 'http://127.0.0.1:8545'],
        [31338, 'http://127.0.0.1:8546'],
      ]);
      for (const c of chains) expect(c.tokens.map((t) => t.address)).toEqual(tokens);
    }
  });
});
