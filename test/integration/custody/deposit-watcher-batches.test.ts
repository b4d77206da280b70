import type { ChainPort } from '../../../src/platform/chain-port/chain-port';
import { EvmChain } from '../../../src/platform/chain-port/evm-chain';
import { DepositWatcher } from '../../../src/modules/deposits/deposit-watcher';
import { scannedBlockNumber } from '../../../src/modules/deposits/deposit-rows';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { mine } from '../../support/chain-controls';
import { SkewedNode } from '../../support/skewed-node';

/**
 * The deposit watcher against nodes that are not the chain's head: one that cannot answer a batch
 * in time (CHAIN_RPC_TIMEOUT_MS) must not stall it for good (the batch halves after each failed scan
 * and grows back after each success); one that is behind (a fallback, a restarted or load-balanced
 * node) is waited for, never taken for a reorganisation; one on another fork is.
 */
describe('the deposit watcher against nodes that fail large scans, lag behind or fork', () => {
  let k: OwnChainKeel;
  beforeAll(async () => {
    // Keel's own watcher steps once at start, then waits: the test's watcher does the scanning.
    k = await startKeelOnOwnChain(31_360, 1, { CHAIN_POLL_INTERVAL_MS: 600_000 });
  }, 60_000);
  afterAll(() => k?.stop());

  // One block at a time: hardhat_mine's blocks of a batch do not chain by parent hash when read back.
  const mineBlocks = async (n: number) => {
    for (let i = 0; i < n; i++) await mine(k.chain.rpcUrl, 1);
  };

  test('scans in smaller batches until it catches up, and records the deposit it passes', async () => {
    const { t, org, blockchainId } = k;
    const { services, platform } = t.keel;
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId, name: 'Watched' })).body.data;
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

  test('a node behind the cursor is waited for: nothing reverted or reported, nothing recorded twice once it catches up; a node on another fork still reverts', async () => {
    const { t, org, blockchainId } = k;
    const { services, platform } = t.keel;
    const db = platform.db;
    const network = services.networks.get(blockchainId)!;
    const { chainId, confirmations } = network.port;
    const node = new SkewedNode(k.chain.rpcUrl, chainId);
    const watcherOn = (port: ChainPort) => new DepositWatcher({ blockchainId, port }, services.chainActivity, services.chains, services.watchedWallets, { pollIntervalMs: 50, batchBlocks: 100, reorgWindowBlocks: 256 }, platform.logger);
    const current = watcherOn(network.port);
    const skewed = watcherOn(new EvmChain({ provider: node, chainId, confirmations }));
    const cursor = async () => (await scannedBlockNumber(db, blockchainId)) ?? 0;
    const catchUp = async (watcher: DepositWatcher) => {
      const head = await network.port.height('final');
      for (let steps = 0; (await cursor()) < head && steps < 60; steps++) await watcher.tick();
      expect(await cursor()).toBeGreaterThanOrEqual(head);
    };
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId, name: 'Paid' })).body.data;
    const { txHash } = (await org.core.post('/v1/dev/faucet', { blockchainId, address: wallet.walletAddress, asset: 'USDC', amount: '2' })).body.data;
    await mineBlocks(3);
    await catchUp(current);
    const deposit = async () => db('chain_transfers').where({ blockchainId, txHash });
    const reports = async () => (await db('outbox_events').whereRaw(`envelope->'data'->>'hash' = ?`, [txHash]).orderBy('createdAt')).map((e: { type: string }) => e.type);
    const [recorded] = await deposit();
    expect(recorded.status).toBe('CONFIRMED');
    expect(await reports()).toEqual(['master.incoming_transfer']);

    // The node knows nothing from the deposit's block on (its head is below the cursor): wait, however often asked.
    const at = await cursor();
    node.knows = Number(recorded.blockNumber) - 1;
    for (let i = 0; i < 3; i++) expect(await skewed.tick()).toBe(0);
    expect(await cursor()).toBe(at);
    expect((await deposit()).map((d) => d.status)).toEqual(['CONFIRMED']);
    expect(await reports()).toEqual(['master.incoming_transfer']);

    // It catches up: the watcher goes on from the cursor, recording nothing twice.
    node.knows = undefined;
    await mineBlocks(2);
    await catchUp(skewed);
    expect((await deposit()).map((d) => d.status)).toEqual(['CONFIRMED']);
    expect(await reports()).toEqual(['master.incoming_transfer']);

    // A node with another block at the deposit's height is a reorganisation: the deposit is reverted and reported.
    node.forkedAt = Number(recorded.blockNumber);
    await skewed.tick();
    expect((await deposit()).map((d) => d.status)).toEqual(['REVERTED']);
    expect(await reports()).toEqual(['master.incoming_transfer', 'master.incoming_transfer_reverted']);
    node.forkedAt = undefined;
    node.destroy();
  });
});
