/**
 * Solana beside EVM in the API (issue 35): a Solana cluster in KEEL_CHAINS is in the registry with the
 * spec's fields (chainId null, network, token standard SPL), its SOL and SPL mints are assets, it is
 * there again after a restart (one row: the network is its key), and an EVM-only feature is refused
 * on it with INVALID_NETWORK naming the feature.
 */
import { SolanaDevnet, startSolanaDevnet } from '../../../src/platform/solana-devnet/devnet';
import { DEVNET_MINTS } from '../../../src/platform/solana-devnet/genesis';
import { formatChainsConfig, parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { ApiClient } from '../../support/api-client';

let devnet: SolanaDevnet;
let t: TestKeel;
let org: TestOrg;

beforeAll(async () => {
  devnet = await startSolanaDevnet({ slotMs: 50, finalizedLag: 4 });
  const solana = { family: 'solana', name: 'Keel Solana Devnet', network: 'devnet', rpcUrl: devnet.rpcUrl, tokens: DEVNET_MINTS.map((m) => ({ symbol: m.symbol, name: m.name, decimals: m.decimals, mint: m.address })), dev: true };
  const keelChains = formatChainsConfig([...parseChainsConfig(process.env.KEEL_CHAINS!), solana as never]);
  t = await startTestKeel({ KEEL_CHAINS: keelChains });
  org = await t.createOrg();
});

afterAll(async () => {
  await t?.stop();
  await devnet?.stop();
});

async function solanaChain() {
  const res = await org.core.get('/v1/blockchains?limit=50');
  expect(res.status).toBe(200);
  return { all: res.body.data as Record<string, unknown>[], solana: (res.body.data as Record<string, unknown>[]).filter((c) => c.isEvmCompatible === false) };
}

test('GET /v1/blockchains lists the Solana cluster beside the EVM chains, with chainId null, network and SPL', async () => {
  const { all, solana } = await solanaChain();
  expect(all.filter((c) => c.isEvmCompatible === true).length).toBe(parseChainsConfig(process.env.KEEL_CHAINS!).length);
  expect(solana).toHaveLength(1);
  expect(solana[0]).toMatchObject({ name: 'Keel Solana Devnet', slug: 'solana-devnet', symbol: 'SOL', chainId: null, network: 'devnet', tokenStandard: 'SPL', isActive: true, isEvmCompatible: false, configurations: { commitment: 'finalized' } });
  const one = await org.core.get(`/v1/blockchains/${solana[0].id}`);
  expect(one.body.data).toMatchObject({ id: solana[0].id, chainId: null, network: 'devnet' });

  const gql = await org.core.graphql('{ blockchains(limit: 50) { items { id chainId network tokenStandard isEvmCompatible } } }');
  expect(gql.body.errors).toBeUndefined();
  expect(gql.body.data.blockchains.items.find((c: { id: string }) => c.id === solana[0].id)).toEqual({ id: solana[0].id, chainId: null, network: 'devnet', tokenStandard: 'SPL', isEvmCompatible: false });
});

test('its assets: SOL (9 decimals) and the SPL mints by address', async () => {
  const { solana } = await solanaChain();
  const res = await org.core.get(`/v1/assets?blockchainId=${solana[0].id}`);
  expect(res.status).toBe(200);
  const assets = res.body.data as { symbol: string; address: string; decimals: number; standard: string; isNative: boolean; network: string }[];
  expect(assets.map((a) => a.symbol)).toEqual(['SOL', 'USDC', 'USDT']);
  expect(assets[0]).toMatchObject({ isNative: true, decimals: 9, standard: 'native', address: '11111111111111111111111111111111', network: 'devnet' });
  for (const mint of DEVNET_MINTS) expect(assets.find((a) => a.symbol === mint.symbol)).toMatchObject({ address: mint.address, decimals: 6, standard: 'SPL', isNative: false });
});

test('an EVM-only feature (a swap quote) is refused on Solana with INVALID_NETWORK naming it', async () => {
  const { solana } = await solanaChain();
  const assets = (await org.core.get(`/v1/assets?blockchainId=${solana[0].id}`)).body.data as { id: string; symbol: string }[];
  const sol = assets.find((a) => a.symbol === 'SOL')!;
  const usdc = assets.find((a) => a.symbol === 'USDC')!;
  const res = await org.core.get(`/v1/swaps/quote?fromAssetId=${sol.id}&toAssetId=${usdc.id}&amount=1`);
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ code: 'INVALID_NETWORK', details: { feature: 'Swaps', fields: [{ field: 'fromAssetId', error: 'INVALID_FIELD' }] } });
  expect(res.body.error.message).toMatch(/^Swaps: not available on Keel Solana Devnet/);
  const gql = await org.core.graphql(`{ swapQuote(fromAssetId: "${sol.id}", toAssetId: "${usdc.id}", amount: "1") { expectedOutput } }`);
  expect(gql.body.errors[0].extensions.code).toBe('INVALID_NETWORK');
});

test('a restart keeps one Solana row (the network is its key)', async () => {
  const { solana } = await solanaChain();
  await t.restart();
  org = { ...org, core: new ApiClient(t.coreUrl, org.core.credentials) };
  const again = await solanaChain();
  expect(again.solana.map((c) => c.id)).toEqual([solana[0].id]);
});
