import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from '../../../src/platform/config';
import { testKeelConfig } from '../../support/keel';
import { Keel, startKeel } from '../../../src/app';
import { onboardOrganization, OnboardedOrganization } from '../../../src/modules/api-keys/onboarding';
import { issueOperatorKey, OperatorKey } from '../../../src/modules/api-keys/operator-key';
import { createTestDatabase, dropTestDatabase, runPrefix } from '../../support/databases';
import { ApiClient } from '../../support/api-client';
import { parseChainsConfig } from '../../../src/modules/chains/chain-config';

/** An organisation with clients that follow Keel across restarts. */
export interface BookOrg extends OnboardedOrganization {
  core(): ApiClient;
  /** Trade permissions (everything but orderbook_market:manage, which only the operator holds). */
  pro(): ApiClient;
  /** A pro-host key with exactly these permissions. */
  proWith(permissions: string[]): Promise<ApiClient>;
}

/**
 * A whole Keel on real PostgreSQL, Redis and the dev chains, with its own database, that can be
 * stopped and started again on the same database (the order-book restart test needs that).
 */
export class BookKeel {
  keel!: Keel;
  private orgs = 0;
  private operatorKey?: OperatorKey;
  private constructor(
    readonly name: string,
    readonly config: Config,
  ) {}

  static async start(overrides: Partial<Config> = {}): Promise<BookKeel> {
    const name = `${runPrefix()}_ob_${randomBytes(4).toString('hex')}`;
    const databaseUrl = await createTestDatabase(name);
    const config = testKeelConfig(name, databaseUrl, { RATE_LIMIT_SCALE: 1000, ...overrides });
    const k = new BookKeel(name, config);
    k.keel = await startKeel(config);
    return k;
  }

  get db() {
    return this.keel.platform.db;
  }

  get services() {
    return this.keel.services;
  }

  async restart(): Promise<void> {
    await this.keel.stop();
    this.keel = await startKeel(this.config);
  }

  async stop(): Promise<void> {
    const redis = this.keel.platform.redis;
    for await (const keys of redis.scanIterator({ MATCH: `${this.config.REDIS_PREFIX}*`, COUNT: 500 })) {
      if (keys.length) await redis.del(keys);
    }
    await this.keel.stop();
    await dropTestDatabase(this.name);
  }

  /** A client with the operator's key: markets are the operator's to create and manage. */
  async operator(): Promise<ApiClient> {
    this.operatorKey ??= await issueOperatorKey(this.services);
    return new ApiClient(this.keel.pro?.url ?? '', { apiKey: this.operatorKey.key, orgId: this.operatorKey.orgId });
  }

  async createOrg(): Promise<BookOrg> {
    const org = await onboardOrganization(this.db, this.services, { name: `Book org ${++this.orgs}`, tier: 'Business', proAccess: true });
    const client = (host: 'core' | 'pro', apiKey: string) => new ApiClient((host === 'core' ? this.keel.core?.url : this.keel.pro?.url) ?? '', { apiKey, orgId: org.orgId });
    return {
      ...org,
      core: () => client('core', org.adminKey),
      pro: () => client('pro', org.proKey!),
      proWith: async (permissions: string[]) => {
        const issued = await this.services.apiKeys.issue({ organizationId: org.orgId, name: `perm ${permissions.join(',') || 'none'}`, host: 'pro', scopes: permissions, tier: 'Business' });
        return client('pro', issued.secret);
      },
    };
  }

  /** Asset ids of the first dev chain by symbol. */
  async assets(): Promise<Record<string, { id: string; decimals: number; blockchainId: string }>> {
    const chainId = parseChainsConfig(process.env.KEEL_CHAINS!)[0].chainId;
    const chain = (await this.services.chains.listBlockchains({ limit: 100, offset: 0 })).items.find((b) => b.chainId === chainId)!;
    const assets = await this.services.chains.listAssets({ limit: 100, offset: 0, blockchainId: chain.id });
    return Object.fromEntries(assets.items.map((a) => [a.symbol, { id: a.id, decimals: a.decimals, blockchainId: chain.id }]));
  }

  /** A master wallet of the organisation on the first dev chain, created through the core REST API. */
  async wallet(org: BookOrg, name = 'Trading'): Promise<string> {
    const { ETH } = await this.assets();
    const res = await org.core().post('/v1/master-wallets', { blockchainId: ETH.blockchainId, name });
    if (res.status !== 201) throw new Error(`master wallet: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.id;
  }

  /** Credits the ledger directly (as the deposit watcher will). */
  async credit(org: BookOrg, walletId: string, assetId: string, amount: bigint, reference = `test:${randomBytes(8).toString('hex')}`): Promise<void> {
    await this.db.transaction((trx) => this.services.ledger.credit(trx, { organizationId: org.orgId, walletId, assetId, amount, reference }));
  }
}

/** Ledger balances whose locked amount is not exactly what the wallet's open orders hold (none when the books balance). */
export async function lockMismatches(db: Knex): Promise<unknown[]> {
  const { rows } = await db.raw(`
    SELECT b.wallet_id, b.asset_id, b.locked, coalesce(o.held, 0) AS held
      FROM ledger_balances b
      LEFT JOIN (SELECT wallet_id, lock_asset_id, sum(locked_amount) AS held FROM orders
                  WHERE status IN ('OPEN', 'PARTIALLY_FILLED') GROUP BY 1, 2) o
        ON o.wallet_id = b.wallet_id AND o.lock_asset_id = b.asset_id
     WHERE b.account = 'trading' AND b.locked <> coalesce(o.held, 0)`);
  return rows;
}

export const units = (text: string, decimals: number): bigint => {
  const [whole, frac = ''] = text.split('.');
  return BigInt(whole + frac.padEnd(decimals, '0').slice(0, decimals));
};

/** The body of POST /markets for the suites' ETH-USDC-style market: tick 0.01, lot 0.001, min notional 1, fees 0.1% / 0.2%. */
export function marketBody(symbol: string, base: { id: string }, quote: { id: string }, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { symbol, baseAssetId: base.id, quoteAssetId: quote.id, tickSize: '0.01', lotSize: '0.001', minNotional: '1', makerFee: '0.001', takerFee: '0.002', ...extra };
}
/**
 * The market's record is whole: every order answered 2xx is there exactly once (by id and by
 * clientOrderId, in its organisation), no clientOrderId twice; the market's sequence numbers are
 * gapless and unshared (a GTC limit order's events are `accepted`, then `filled`, `rested` or
 * (self-trade) `cancelled`, then `filled` once more if it rested and was filled as a maker; each
 * trade is one event); the ledger conserves every asset and locks are what open orders hold.
 */
export async function expectMarketRecord(k: BookKeel, marketId: string, accepted: { id: string; clientOrderId: string; orgId: string }[]): Promise<void> {
  // Every 2xx order exactly once, by id and by clientOrderId; no clientOrderId twice.
  const rows: { id: string; clientOrderId: string; organizationId: string }[] = await k.db('orders').where({ marketId }).select('id', 'clientOrderId', 'organizationId');
  const byId = new Map(rows.map((r) => [r.id, r]));
  expect(byId.size).toBe(rows.length);
  const missing = accepted.filter((s) => byId.get(s.id)?.clientOrderId !== s.clientOrderId || byId.get(s.id)?.organizationId !== s.orgId);
  expect(missing.map((s) => s.clientOrderId)).toEqual([]);
  const twice = await k.db('orders').where({ marketId }).groupBy('organizationId', 'clientOrderId').havingRaw('count(*) > 1').select('clientOrderId');
  expect(twice).toEqual([]);

  // Gapless sequence: a GTC limit order's events are `accepted`, then `filled`, `rested` or (self-trade) `cancelled`,
  // then `filled` once more if it rested and was filled as a maker; each trade is one event.
  const { rows: counts } = await k.db.raw(
    `SELECT (SELECT sequence FROM markets WHERE id = :m)::bigint AS stored,
            (SELECT count(*) FROM trades WHERE market_id = :m)::bigint AS trades,
            (SELECT count(DISTINCT sequence) FROM trades WHERE market_id = :m)::bigint AS trade_sequences,
            (SELECT coalesce(sum(2 + CASE WHEN rest_sequence IS NOT NULL AND status = 'FILLED' THEN 1 ELSE 0 END), 0) FROM orders WHERE market_id = :m)::bigint AS order_events,
            (SELECT count(*) FROM (SELECT sequence FROM orders WHERE market_id = :m UNION ALL SELECT rest_sequence FROM orders WHERE market_id = :m AND rest_sequence IS NOT NULL
                                   UNION ALL SELECT sequence FROM trades WHERE market_id = :m) s)::bigint AS stored_events,
            (SELECT count(DISTINCT s) FROM (SELECT sequence AS s FROM orders WHERE market_id = :m UNION ALL SELECT rest_sequence FROM orders WHERE market_id = :m AND rest_sequence IS NOT NULL
                                   UNION ALL SELECT sequence FROM trades WHERE market_id = :m) u WHERE s BETWEEN 1 AND (SELECT sequence FROM markets WHERE id = :m))::bigint AS distinct_events`,
    { m: marketId },
  );
  const c = counts[0];
  expect(c.trades).toBe(c.trade_sequences);
  expect(String(BigInt(c.order_events) + BigInt(c.trades))).toBe(c.stored);
  expect(c.distinct_events).toBe(c.stored_events);

  // Conservation per asset; locks are exactly the open orders' holdings.
  for (const row of await k.services.ledger.invariant()) expect(row).toMatchObject({ holds: true });
  expect(await lockMismatches(k.db)).toEqual([]);
}

