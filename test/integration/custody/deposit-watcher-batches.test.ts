import type { ChainPort } from '../../../src/platform/chain-port/chain-port';
import { DepositWatcher } from '../../../src/modules/deposits/deposit-watcher';
import { scannedBlockNumber } from '../../../src/modules/deposits/deposit-rows';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { mine } from '../../support/chain-controls';

/**
 * A node that cannot answer a watcher's batch in time (CHAIN_RPC_TIMEOUT_MS) must not stall the
 * watcher for good: the batch halves after each failed scan and grows back after each success.
 */
describe('the deposit watcher against a node that fails large scans', () => {
  let k: OwnChainKeel;
  beforeAll(async () => {
    // Keel's own watcher steps once at start, then waits: the test's watcher does the scanning.
    k = await startKeelOnOwnChain(31_360, 1, { CHAIN_POLL_INTERVAL_MS: 600_000 });
  }, 60_000);
  afterAll(() => k?.stop());

  test('scans in smaller batches until it catches up, and records the deposit it passes', async () => {
    const { t, org, blockchainId } = k;
    const { services, platform } = t.keel;
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId, name: 'Watched' })).body.data;
    // One block at a time: hardhat_mine's blocks of a batch do not chain by parent hash when read back.
    const mineBlocks = async (n: number) => {
      for (let i = 0; i < n; i++) await mine(k.chain.rpcUrl, 1);
    };
    await mineBlocks(10);
    const { txHash } = (await org.core.post('/v1/dev/faucet', { blockchainId, address: wallet.walletAddress, asset: 'USDC', amount: '3' })).body.data;
    await mineBlocks(30);

    const network = services.networks.get(blockchainId)!;
    const timeout = () => Promise.reject(Object.assign(new Error('request timeout'), { code: 'TIMEOUT' }));
    const port = new Proxy(network.port, {
      get: (target, prop) => {
        if (prop === 'scan') return (from: number, to: number, ...rest: [never, never]) => (to - from + 1 > 4 ? timeout() : target.scan(from, to, ...rest));
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as ChainPort;
    const watcher = new DepositWatcher({ blockchainId, port }, services.chainActivity, services.chains, services.watchedWallets, { pollIntervalMs: 50, batchBlocks: 100, reorgWindowBlocks: 256 }, platform.logger);

    const head = await network.port.height('final');
    let steps = 0;
    while (((await scannedBlockNumber(platform.db, blockchainId)) ?? 0) < head && steps < 60) {
      steps++;
      await watcher.tick().catch(() => 0);
    }
    expect(await scannedBlockNumber(platform.db, blockchainId)).toBeGreaterThanOrEqual(head);
    expect(await platform.db('chain_transfers').where({ blockchainId, txHash }).first()).toBeDefined();
  });
});
