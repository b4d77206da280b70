import type { Logger } from '../../platform/logger';
import { startPollingLoop } from '../../platform/polling-loop';
import type { ChainNetwork, ChainService } from '../chains';
import type { WatchedWallets } from '../wallets';
import { ChainMovedError, scanBlocks } from './block-scanner';
import { ChainActivityRecorder, ChainAssets, CursorMovedError, NATIVE_KEY } from './chain-activity-recorder';
import type { ChainCursor } from './chain-transfer.model';
import { isNftStandard } from '../chains';

export interface DepositWatcherOptions {
  pollIntervalMs: number;
  batchBlocks: number;
  reorgWindowBlocks: number;
}

/**
 * Follows one chain: scans each block once it has the chain's confirmation count, records the
 * transfers of watched wallets, and walks back over a reorg. Its place is the persisted cursor, so a
 * restart resumes where the last committed scan ended. Several workers may watch one chain: the
 * cursor guard lets one commit and the others' work is discarded.
 */
export class DepositWatcher {
  constructor(
    private readonly network: ChainNetwork,
    private readonly recorder: ChainActivityRecorder,
    private readonly chains: ChainService,
    private readonly wallets: WatchedWallets,
    private readonly options: DepositWatcherOptions,
    private readonly logger: Logger,
  ) {}

  start(): { stop(): Promise<void> } {
    return startPollingLoop(() => this.tick(), this.options.pollIntervalMs, (e) =>
      this.logger.warn({ chainId: this.network.spec.chainId, err: e instanceof Error ? e.message : String(e) }, 'deposit watcher: scan failed, retrying'),
    );
  }

  /** One step: walk back over a reorg, or scan the next confirmed blocks. Returns blocks advanced. */
  async tick(): Promise<number> {
    const { provider, blockchainId, spec } = this.network;
    const head = await provider.getBlockNumber();
    const target = head - spec.confirmations + 1;
    const cursor = await this.recorder.cursor(blockchainId);
    if (!cursor) {
      const start = await provider.getBlock(Math.max(0, target));
      if (start?.hash) await this.recorder.startAt(blockchainId, { number: start.number, hash: start.hash, parentHash: start.parentHash, timestamp: new Date(start.timestamp * 1000) });
      return 0;
    }
    const atCursor = await provider.getBlock(cursor.blockNumber);
    if (!atCursor || atCursor.hash !== cursor.blockHash) {
      await this.walkBack(cursor);
      return 0;
    }
    if (target <= cursor.blockNumber) return 0;

    const to = Math.min(target, cursor.blockNumber + this.options.batchBlocks);
    const [assets, watched] = await Promise.all([this.assets(), this.wallets.on(blockchainId)]);
    const contracts = [...assets.byToken.entries()].filter(([k]) => k !== NATIVE_KEY).map(([, a]) => a);
    const tokens = contracts.filter((a) => !isNftStandard(a.standard)).map((a) => a.address);
    const nfts = contracts.filter((a) => isNftStandard(a.standard)).map((a) => a.address);
    try {
      const scanStarted = Date.now();
      const range = await scanBlocks(provider, { from: cursor.blockNumber + 1, to }, tokens, (a) => watched.has(a.toLowerCase()), nfts);
      if (range.blocks[0].parentHash !== cursor.blockHash) throw new ChainMovedError('the chain moved under the cursor');
      const recordStarted = Date.now();
      const confirmed = await this.recorder.record(assets, cursor, range, watched, this.options.reorgWindowBlocks);
      this.logger.debug({ chainId: spec.chainId, fromBlock: cursor.blockNumber + 1, toBlock: to, transfers: range.transfers.length, scanMs: recordStarted - scanStarted, recordMs: Date.now() - recordStarted }, 'blocks scanned');
      if (confirmed.length) this.logger.info({ chainId: spec.chainId, deposits: confirmed.length, toBlock: to }, 'deposits confirmed');
      return range.blocks.length;
    } catch (e) {
      if (e instanceof ChainMovedError || e instanceof CursorMovedError) return 0;
      throw e;
    }
  }

  /** Finds the newest recorded block still on the canonical chain and rewinds everything above it. */
  private async walkBack(cursor: ChainCursor): Promise<void> {
    const { provider, blockchainId, spec } = this.network;
    const recent = await this.recorder.recentBlocks(blockchainId);
    let ancestor: ChainCursor | undefined;
    for (const b of recent) {
      const canonical = await provider.getBlock(b.blockNumber);
      if (canonical?.hash === b.blockHash) {
        ancestor = b;
        break;
      }
    }
    if (!ancestor) {
      // Deeper than the reorg window: resume from the oldest block we remember, as the chain has it now.
      const oldest = recent[recent.length - 1]?.blockNumber ?? cursor.blockNumber;
      const block = await provider.getBlock(Math.max(0, oldest - 1));
      if (!block?.hash) return;
      ancestor = { blockNumber: block.number, blockHash: block.hash };
      this.logger.error({ chainId: spec.chainId, fromBlock: cursor.blockNumber, toBlock: ancestor.blockNumber }, 'reorg deeper than CHAIN_REORG_WINDOW_BLOCKS');
    }
    const [assets, watched] = await Promise.all([this.assets(), this.wallets.on(blockchainId)]);
    try {
      const reverted = await this.recorder.rewind(assets, cursor, ancestor, watched);
      this.logger.warn({ chainId: spec.chainId, fromBlock: cursor.blockNumber, toBlock: ancestor.blockNumber, revertedDeposits: reverted.length }, 'chain reorganised; rewound');
    } catch (e) {
      if (!(e instanceof CursorMovedError)) throw e;
    }
  }

  private assets(): Promise<ChainAssets> {
    return chainAssetsOf(this.chains, this.network.blockchainId);
  }
}

/** What the recorder labels a chain's transfers with: the chain, and its assets by (lower-cased) contract or mint. */
export async function chainAssetsOf(chains: ChainService, blockchainId: string): Promise<ChainAssets> {
  const [chain, rows, collections] = await Promise.all([chains.blockchainRow(blockchainId), chains.assetsOf(blockchainId), chains.nftCollectionsOf(blockchainId)]);
  return {
    blockchain: { id: chain.id, name: chain.name, slug: chain.slug },
    byToken: new Map([...rows, ...collections].map((a) => [a.isNative ? NATIVE_KEY : a.address.toLowerCase(), { id: a.id, symbol: a.symbol, decimals: a.decimals, address: a.address, standard: a.standard }])),
  };
}

/** One watcher per chain of the deployment (EVM chains, or Solana clusters: SolanaDepositWatcher). */
export function startDepositWatchers<N>(networks: N[], make: (n: N) => { start(): { stop(): Promise<void> } }): { stop(): Promise<void> } {
  const loops = networks.map((n) => make(n).start());
  return { stop: () => Promise.all(loops.map((l) => l.stop())).then(() => undefined) };
}
