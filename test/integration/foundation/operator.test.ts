import { parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { ApiClient } from '../../support/api-client';
import { useTestKeel } from '../../support/use-test-keel';
import { keelCommand } from '../../support/keel-cli';

/**
 * Markets are shared by every organisation, so managing them is the operator's: `keel market`,
 * or the operator key only `keel operator key create` mints. Tenants' keys trade.
 */
let operator: ApiClient;
let assets: Record<string, { id: string }>;
let cliMarket: Record<string, unknown>;
const chainId = parseChainsConfig(process.env.KEEL_CHAINS!)[0].chainId;

const keel = (args: string[]) => keelCommand<unknown>(t.config, args);

const marketBody = (symbol: string, base: string, quote: string) => ({ symbol, baseAssetId: assets[base].id, quoteAssetId: assets[quote].id, tickSize: '0.01', lotSize: '0.001' });

const { t, orgs: [org] } = useTestKeel({ RATE_LIMIT_SCALE: 100 }, { orgs: 1 });
beforeAll(async () => {
  const chain = (await org.core.get('/v1/blockchains')).body.data.find((b: { chainId: number }) => b.chainId === chainId);
  assets = Object.fromEntries((await org.core.get(`/v1/assets?blockchainId=${chain.id}&limit=100`)).body.data.map((a: { symbol: string }) => [a.symbol, a]));
  const minted = (await keel(['operator', 'key', 'create', '--json'])) as { orgId: string; key: string };
  cliMarket = (await keel(['market', 'create', '--base', 'ETH', '--quote', 'DAI', '--blockchain', String(chainId), '--min-notional', '1', '--maker-fee', '0.001', '--taker-fee', '0.002', '--json'])) as Record<string, unknown>;
  expect(Object.keys(minted).sort()).toEqual(['key', 'orgId']);
  operator = new ApiClient(t.proUrl, { apiKey: minted.key, orgId: minted.orgId });
}, 150_000);

describe('the operator', () => {
  it('manages markets with its key over REST and GraphQL', async () => {
    const created = await operator.post('/v1/orderbook/markets', marketBody('ETH-USDC', 'ETH', 'USDC'));
    expect(created.status).toBe(201);
    const halted = await operator.patch('/v1/orderbook/markets/ETH-USDC', { status: 'HALTED' });
    expect(halted.body.data.status).toBe('HALTED');
    const gql = await operator.graphql('mutation { updateMarket(symbol: "ETH-USDC", input: { status: ACTIVE, takerFee: "0.002" }) { status takerFee } }');
    expect(gql.body.data.updateMarket).toEqual({ status: 'ACTIVE', takerFee: '0.002' });
  });

  it('creates and updates markets from the command line, printed as the API shows them; a halt reaches the running host', async () => {
    expect(cliMarket).toMatchObject({ symbol: 'ETH-DAI', baseAssetId: assets.ETH.id, quoteAssetId: assets.DAI.id, tickSize: '0.01', lotSize: '0.001', minNotional: '1', makerFee: '0.001', takerFee: '0.002', status: 'ACTIVE' });
    expect(cliMarket).toEqual((await org.pro.get('/v1/orderbook/markets/ETH-DAI')).body.data);

    // The running host trades the market (its engine is loaded) before the operator halts it from another process.
    const walletId = (await org.core.post('/v1/master-wallets', { blockchainId: cliMarket.blockchainId, name: 'Trader' })).body.data.id;
    await t.keel.platform.db.transaction((trx) => t.keel.services.ledger.credit(trx, { organizationId: org.orgId, walletId, assetId: assets.DAI.id, amount: 10n ** 21n, reference: 'test:operator' }));
    const order = { walletId, market: 'ETH-DAI', side: 'BUY', type: 'LIMIT', price: '100', quantity: '0.1', timeInForce: 'GTC' };
    expect((await org.pro.post('/v1/orderbook/orders', order)).status).toBe(201);

    const updated = await keel(['market', 'update', 'ETH-DAI', '--status', 'HALTED', '--taker-fee', '0.003', '--json']);
    expect(updated).toMatchObject({ symbol: 'ETH-DAI', status: 'HALTED', takerFee: '0.003' });
    expect(updated).toEqual((await org.pro.get('/v1/orderbook/markets/ETH-DAI')).body.data);
    const refused = await org.pro.post('/v1/orderbook/orders', order);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('MARKET_HALTED');
  }, 90_000);

  it('names a market from the command line as the API lets it (a second book of a pair); a malformed symbol is refused, no market made', async () => {
    const named = await keel(['market', 'create', '--symbol', 'ethbook2-dai', '--base', 'ETH', '--quote', 'DAI', '--blockchain', String(chainId), '--json']);
    expect(named).toMatchObject({ symbol: 'ETHBOOK2-DAI', baseAssetId: assets.ETH.id, quoteAssetId: assets.DAI.id, status: 'ACTIVE' });
    expect(named).toEqual((await org.pro.get('/v1/orderbook/markets/ETHBOOK2-DAI')).body.data);
    await expect(keel(['market', 'create', '--symbol', 'ETH_DAI', '--base', 'ETH', '--quote', 'DAI', '--json'])).rejects.toThrow(/BASE-QUOTE/);
    expect((await org.pro.get('/v1/orderbook/markets/ETH_DAI')).status).toBe(404);
  }, 60_000);
});

describe("tenants' keys trade; they never manage markets", () => {
  it('a tenant key calling a market-management endpoint gets 403 naming orderbook_market:manage, REST and GraphQL', async () => {
    for (const res of [
      await org.pro.post('/v1/orderbook/markets', marketBody('ETH-USDT', 'ETH', 'USDT')),
      await org.pro.patch('/v1/orderbook/markets/ETH-USDC', { status: 'HALTED' }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain('orderbook_market:manage');
    }
    const gql = await org.pro.graphql('mutation { updateMarket(symbol: "ETH-USDC", input: { status: HALTED }) { status } }');
    expect(gql.body.errors[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    expect(gql.body.errors[0].message).toContain('orderbook_market:manage');
  });

  it('market reads stay as they are', async () => {
    const res = await org.pro.get('/v1/orderbook/markets');
    expect(res.status).toBe(200);
    expect(res.body.data.map((m: { symbol: string }) => m.symbol)).toEqual(expect.arrayContaining(['ETH-DAI', 'ETH-USDC']));
  });

  it('granting orderbook_market:manage to a tenant key is 403 naming it: create (REST and GraphQL) and onboarding', async () => {
    const rest = await org.core.post('/v1/api-keys', { name: 'market maker', host: 'PRO', scopes: ['orderbook_order:create', 'orderbook_market:manage'] });
    expect(rest.status).toBe(403);
    expect(rest.body.error.message).toContain('orderbook_market:manage');
    const gql = await org.core.graphql('mutation { createApiKey(input: { name: "mm", host: PRO, scopes: ["orderbook_market:manage"] }) { id } }');
    expect(gql.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(gql.body.errors[0].message).toContain('orderbook_market:manage');
    // Onboarding issues keys through the same rule.
    await expect(t.keel.services.apiKeys.issue({ organizationId: org.orgId, name: 'x', host: 'pro', scopes: ['orderbook_market:manage'], tier: 'Business' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(Object.keys(org)).not.toContain('proAdminKey');
  });

  it('a tenant key stored with orderbook_market:manage before the rule cannot use it, nor be rotated', async () => {
    const created = await org.core.post('/v1/api-keys', { name: 'legacy', host: 'PRO', scopes: ['orderbook_market:read'] });
    await t.keel.platform.db('api_keys').where({ id: created.body.data.id }).update({ scopes: ['orderbook_market:read', 'orderbook_market:manage'] });
    const legacy = new ApiClient(t.proUrl, { apiKey: created.body.data.secret, orgId: org.orgId });
    const res = await legacy.patch('/v1/orderbook/markets/ETH-USDC', { status: 'HALTED' });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toContain('orderbook_market:manage');
    const rotated = await org.core.post(`/v1/api-keys/${created.body.data.id}/rotate`, {});
    expect(rotated.status).toBe(403);
    expect(rotated.body.error.message).toContain('orderbook_market:manage');
  });
});

describe("a key's rate-limit tier never exceeds its organisation's", () => {
  it('asking for more is 422 INVALID_FIELD naming tier; the same or less is granted', async () => {
    const starter = await t.createOrg({ tier: 'Starter', proAccess: false });
    const rest = await starter.core.post('/v1/api-keys', { name: 'fast', scopes: ['read'], tier: 'Business' });
    expect(rest.status).toBe(422);
    expect(rest.body.error).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'tier' }] } });
    const gql = await starter.core.graphql('mutation { createApiKey(input: { name: "fast", scopes: ["read"], tier: Pro }) { id } }');
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'tier' }] } });
    expect((await starter.core.post('/v1/api-keys', { name: 'same', scopes: ['read'], tier: 'Starter' })).body.data.tier).toBe('Starter');
    const pro = await t.createOrg({ tier: 'Pro', proAccess: false });
    expect((await pro.core.post('/v1/api-keys', { name: 'slower', scopes: ['read'], tier: 'Starter' })).body.data.tier).toBe('Starter');
  });
});
