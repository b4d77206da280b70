import { createServer } from 'node:http';
import { startDevChains } from '../src/modules/chains/chain-networks';
import { formatChainsConfig } from '../src/modules/chains/chain-config';
import { loadConfig } from '../src/platform/config';
import { createLogger } from '../src/platform/logger';
import type { DevChain } from '../src/platform/chain/devchain';

/**
 * A trading benchmark's dev chain in a process of its own, as a deployment's chain is a node of its
 * own: the chain Keel's sandbox would start (DEV_CHAIN_IDS, its block interval and confirmations,
 * the test tokens, the DEX and the test NFTs, by Keel's own `startDevChains`), and on PORT the
 * KEEL_CHAINS value that points Keel's processes at it (GET /ready: 200 with that JSON once deployed).
 * Exits on SIGTERM.
 */
async function main(): Promise<void> {
  const config = loadConfig({ ...process.env, DEV_CHAIN_PORT: '0' });
  const started: DevChain[] = [];
  const specs = await startDevChains(config, started, createLogger('warn'));
  const keelChains = formatChainsConfig(specs);
  createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(keelChains);
  }).listen(Number(process.env.PORT), '127.0.0.1');
  process.on('SIGTERM', () => void Promise.all(started.map((c) => c.stop())).finally(() => process.exit(0)));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
