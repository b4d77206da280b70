import type { Config } from '../../src/platform/config';
import { DevChain, startDevChain } from '../../src/platform/chain/devchain';
import { devChainAccount } from '../../src/platform/chain/dev-accounts';
import { deployTestTokens, TestToken } from '../../src/platform/chain/test-tokens';
import { deployTestNfts } from '../../src/platform/chain/test-nfts';
import { devChainSpec } from '../../src/modules/chains/chain-networks';
import { formatChainsConfig } from '../../src/modules/chains/chain-config';
import { startTestKeel, TestKeel, TestOrg } from './keel';
import { eventually } from './eventually';

export interface OwnChainKeel {
  chain: DevChain;
  t: TestKeel;
  org: TestOrg;
  blockchainId: string;
  /** The chain's registered assets by symbol (ETH, USDC, USDT, DAI, and the test NFT collections KNFT, KITEM). */
  assets: Record<string, { id: string; address: string }>;
  stop(): Promise<void>;
}

/**
 * A Keel on a dev chain of the test's own that mines only when a transaction arrives or the test
 * mines, for tests that decide every height or rewrite history; with one organisation, and the
 * deposit watcher already in place.
 */
export async function startKeelOnOwnChain(chainId: number, confirmations: number, overrides: Partial<Config> = {}): Promise<OwnChainKeel> {
  const { chain, keelChains } = await startOwnChain(chainId, confirmations);
  let t: TestKeel | undefined;
  try {
    t = await startTestKeel({ RATE_LIMIT_SCALE: 100, CHAIN_POLL_INTERVAL_MS: 100, ...overrides, KEEL_CHAINS: keelChains });
    const org = await t.createOrg();
    const [blockchainId] = (await org.core.request('GET', '/v1/blockchains')).body.data.map((c: { id: string }) => c.id);
    const assets = Object.fromEntries((await org.core.request('GET', `/v1/assets?blockchainId=${blockchainId}`)).body.data.map((a: { symbol: string }) => [a.symbol, a]));
    const keel = t;
    await eventually(async () => (await keel.keel.platform.db('chain_cursors').first()) !== undefined);
    return { chain, t, org, blockchainId, assets, stop: async () => (await keel.stop(), await chain.stop()) };
  } catch (e) {
    await t?.stop();
    await chain.stop();
    throw e;
  }
}

/**
 * A dev chain of its own that mines only when a transaction arrives or the caller mines, with the
 * test tokens and NFT collections deployed, and the KEEL_CHAINS value that points a Keel at it.
 */
export async function startOwnChain(chainId: number, confirmations: number, dataDir?: string): Promise<{ chain: DevChain; tokens: TestToken[]; keelChains: string }> {
  const chain = await startDevChain({ chainId, port: 0, blockIntervalMs: 0, dataDir });
  try {
    const tokens = await deployTestTokens(chain.rpcUrl, devChainAccount(0).privateKey);
    const nfts = await deployTestNfts(chain.rpcUrl);
    return { chain, tokens, keelChains: formatChainsConfig([devChainSpec(chainId, chain.rpcUrl, confirmations, [...tokens, ...nfts])]) };
  } catch (e) {
    await chain.stop();
    throw e;
  }
}
