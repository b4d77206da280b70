import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ethers } from 'ethers';
import { onboardOrganization } from '../src/modules/api-keys/onboarding';
import { DepositWatcher } from '../src/modules/deposits/deposit-watcher';
import { devChainAccount } from '../src/platform/chain/dev-accounts';
import { mine, setAutomine } from '../test/support/chain-controls';
import { startOwnChain } from '../test/support/own-chain';
import { median, percentile } from './support';
import { startChainBenchKeel } from './chain-keel';
import { runSolana } from './chain-solana';

const CHAIN_ID = 31_399;
const erc20 = new ethers.Interface(['function transfer(address to, uint256 amount) returns (bool)']);

/**
 * The deposit watcher against a local Hardhat chain, in this process (`chain solana`: Solana, chain-solana.ts).
 * - Indexing throughput: blocks each holding `perBlock` USDC transfers to `addresses` watched
 *   deposit addresses are mined while no watcher runs; then one watcher catches up, and the
 *   figure is transfers recorded (rows committed, events in the outbox) per second. Median of `runs`.
 * - Detection latency: with the watcher running at the default CHAIN_POLL_INTERVAL_MS and one
 *   confirmation, one deposit per block: from the moment the block is mined (the mining call
 *   returns) to the moment its committed outbox row is seen (polled every 2 ms). `samples` deposits; p50 and p99.
 */
export async function run(args: string[]): Promise<object> {
  // `chain solana [perRun runs samples addresses]`: the same two measures on Keel's sandbox Solana network (chain-solana.ts).
  if (args[0] === 'solana') return runSolana(args.slice(1));
  const perBlock = Number(args[0] ?? 500);
  const blocksPerRun = Number(args[1] ?? 4);
  const runs = Number(args[2] ?? 3);
  const samples = Number(args[3] ?? 100);
  const addresses = Number(args[4] ?? 500);

  const dataDir = mkdtempSync(join(tmpdir(), 'keel-bench-chain-'));
  const { chain, tokens, keelChains } = await startOwnChain(CHAIN_ID, 1, dataDir);
  const { config, keel } = await startChainBenchKeel('chain', keelChains);
  const { services, platform } = keel;
  const db = platform.db;
  try {
    const network = services.networks.all()[0];
    const org = await onboardOrganization(db, services, { name: 'bench', tier: 'Business', proAccess: false });
    const wallet = await services.masterWallets.create(org.orgId, { blockchainId: network.blockchainId, name: 'bench' });
    const targets: string[] = [];
    for (let i = 0; i < addresses; i++) targets.push((await services.addresses.create(org.orgId, wallet.id, {})).address);

    const funder = new ethers.Wallet(devChainAccount(0).privateKey, network.provider);
    const usdc = tokens.find((t) => t.symbol === 'USDC')!.address;
    let nonce = await network.provider.getTransactionCount(funder.address, 'pending');
    const fees = await network.provider.getFeeData();
    /** One block holding `count` USDC transfers, signed locally and sent in parallel. */
    const fillBlock = async (count: number) => {
      const txs = [];
      for (let i = 0; i < count; i++) {
        txs.push(
          funder.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: nonce++, to: usdc, data: erc20.encodeFunctionData('transfer', [targets[i % targets.length], 1_000_000n]), gasLimit: 60_000n, maxFeePerGas: fees.maxFeePerGas! * 4n, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! }),
        );
      }
      const raws = await Promise.all(txs);
      for (let i = 0; i < raws.length; i += 100) await Promise.all(raws.slice(i, i + 100).map((raw) => network.provider.broadcastTransaction(raw)));
      await mine(chain.rpcUrl, 1);
    };

    const watcher = new DepositWatcher(network, services.chainActivity, services.chains, services.watchedWallets, { pollIntervalMs: config.CHAIN_POLL_INTERVAL_MS, batchBlocks: config.CHAIN_SCAN_BATCH_BLOCKS, reorgWindowBlocks: config.CHAIN_REORG_WINDOW_BLOCKS }, platform.logger);
    await watcher.tick(); // takes its starting place
    const countRows = async () => Number((await db('chain_transfers').count({ n: '*' }))[0].n);

    const throughput: number[] = [];
    await setAutomine(chain.rpcUrl, false);
    for (let r = 0; r < runs; r++) {
      for (let b = 0; b < blocksPerRun; b++) await fillBlock(perBlock);
      const before = await countRows();
      const started = process.hrtime.bigint();
      while ((await watcher.tick()) > 0 || (await countRows()) - before < perBlock * blocksPerRun) {
        // catching up
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      throughput.push(((await countRows()) - before) / seconds);
    }

    // Latency: the watcher polls on its own schedule, as in production.
    const loop = watcher.start();
    const latencies: number[] = [];
    for (let i = 0; i < samples; i++) {
      const to = targets[i % targets.length];
      const raw = await funder.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: nonce++, to: usdc, data: erc20.encodeFunctionData('transfer', [to, 7n]), gasLimit: 60_000n, maxFeePerGas: fees.maxFeePerGas! * 4n, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! });
      const hash = ethers.keccak256(raw);
      await network.provider.broadcastTransaction(raw);
      await mine(chain.rpcUrl, 1);
      const minedAt = Date.now();
      for (;;) {
        const row = await db('outbox_events').whereRaw(`envelope->'data'->>'hash' = ?`, [hash]).first('id');
        if (row) {
          latencies.push(Date.now() - minedAt);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      // Spread samples over the poll cycle.
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 2 * config.CHAIN_POLL_INTERVAL_MS)));
    }
    await loop.stop();
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      benchmark: 'chain',
      chain: 'hardhat (local, in-memory)',
      indexing: { transfersPerBlock: perBlock, blocksPerRun, runs, watchedAddresses: addresses, transfersPerSecondRuns: throughput.map(Math.round), transfersPerSecondMedian: Math.round(median(throughput)) },
      detectionLatency: { samples, pollIntervalMs: config.CHAIN_POLL_INTERVAL_MS, confirmations: 1, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted[sorted.length - 1] },
    };
  } finally {
    await keel.stop();
    await chain.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
