import { formatChainsConfig } from '../src/modules/chains/chain-config';
import { startDevChains } from '../src/modules/chains/chain-networks';
import type { DevChain } from '../src/platform/chain/devchain';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';

/**
 * Dev chains of a benchmark's own, started here as Keel's sandbox would start them (env's DEV_CHAIN_IDS,
 * the test tokens, the DEX and the test NFTs, by Keel's own `startDevChains`; each chain's node a
 * process of its own, its journal under dataDir), and the KEEL_CHAINS value that points Keel at them.
 */
export async function startBenchChains(env: NodeJS.ProcessEnv, dataDir: string): Promise<{ keelChains: string; pids: number[]; stop(): Promise<void> }> {
  const chains: DevChain[] = [];
  const stop = () => Promise.all(chains.map((c) => c.stop())).then(() => undefined);
  try {
    const specs = await startDevChains(loadConfig(env, { DEV_CHAIN_PORT: 0, KEEL_DATA_DIR: dataDir }), chains, createLogger('silent'));
    return { keelChains: formatChainsConfig(specs), pids: chains.map((c) => c.pid), stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
