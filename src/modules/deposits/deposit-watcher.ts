import type { Logger } from '../../platform/logger';
import { startPollingLoop } from '../../platform/polling-loop';
import { ChainMovedError, recordedBlock, type ChainPort, type ScanWatch } from '../../platform/chain-port/chain-port';
import type { ChainService } from '../chains';
import type { WatchedWallets } from '../wallets';
import { ChainActivityRecorder, ChainAssets, CursorMovedError, NATIVE_KEY } from './chain-activity-recorder';
import type { ChainCursor } from './chain-transfer.model';
import { isNftStandard } from '../chains';

export interface DepositWatcherOptions {
  pollIntervalMs: number;
  batchBlocks: number;
  reorgWindowBlocks: number;
}

/** A chain as the watcher follows it: its registry id and its chain port (either family). */
export interface WatchedChain {
  blockchainId: string;
  port: ChainPort;
}

/** How far back the watcher looks for a block to stand on (Solana's skipped slots have none). */
const SKIPPED_SLOTS_LOOKBACK = 64;

/**
 * Follows one chain through its chain port, EVM or Solana (issue 35): scans each block once it is
 * final (EVM: the chain's confirmation count; Solana: `finalized`, the commitment Keel credits at),
 * records the transfers of watched wallets, and walks back over a reorganisation (a rolled-back
 * Solana slot never reaches finality, so is never recorded; a recorded block whose hash changed is
 * walked back over on either family). A node that cannot answer for the cursor's block (it is behind:
 * a fallback, a restarted or load-balanced node) is waited for, never taken for a reorganisation
 * (ChainPort.blockAt). Its place is the persisted cursor, so a restart resumes where
 * the last committed scan ended. Several workers may watch one chain: the cursor guard lets one
 * commit and the others' work is discarded.
 */
export class DepositWatcher {
  constructor(
    private readonly network: WatchedChain,
    private readonly recorder: ChainActivityRecorder,
    private readonly chains: ChainService,
    private readonly wallets: WatchedWallets,
    private readonly options: DepositWatcherOptions,
    private readonly logger: Logger,
  ) {
    this.batch = options.batchBlocks;
  }

  /** Blocks the next scan asks for (see scanNext). */
  private batch: number;

  start(): { stop(): Promise<void> } {
    return startPollingLoop(() => this.tick(), this.options.pollIntervalMs, (e) =>
      this.logger.warn({ blockchainId: this.network.blockchainId, family: this.network.port.family, err: e }, 'deposit watcher: scan failed, retrying'),
    );
  }

  /** One step: walk back over a reorg, or scan the next final blocks. Returns blocks advanced. */
  async tick(): Promise<number> {
    const { port, blockchainId } = this.network;
    const final = await port.height('final');
    const cursor = await this.recorder.cursor(blockchainId);
    if (!cursor) {
      const first = await this.blockAtOrBelow(final);
      if (first) await this.recorder.startAt(blockchainId, first);
      return 0;
    }
    const state = recordedBlock(await port.blockAt(cursor.blockNumber, 'final'), cursor.blockHash);
    if (state === 'forked') await this.walkBack(cursor);
    if (state !== 'canonical' || final <= cursor.blockNumber) return 0;

    // The blocks this step may scan: a Keel line mined there keeps the wallets it moves money between watched.
    const [assets, watched] = await Promise.all([this.assets(), this.wallets.on(blockchainId, { after: cursor.blockNumber, through: final })]);
    const contracts = [...assets.byToken.entries()].filter(([k]) => k !== NATIVE_KEY).map(([, a]) => a);
    const watch = {
      addresses: new Set([...watched.values()].map((w) => w.walletAddress)),
      tokens: contracts.filter((a) => !isNftStandard(a.standard)).map((a) => a.address),
      nfts: contracts.filter((a) => isNftStandard(a.standard)).map((a) => a.address),
    };
    try {
      const scanStarted = Date.now();
      let range = await this.scanNext(cursor.blockNumber + 1, final, watch);
      // A batch of skipped Solana slots only: look on to the final head (the cursor needs a block to stand on).
      if (!range.blocks.length) range = await port.scan(cursor.blockNumber + 1, final, watch, 'final');
      if (!range.blocks.length) return 0;
      const parent = range.blocks[0].parentHash;
      if (parent !== null && parent !== cursor.blockHash) throw new ChainMovedError('the chain moved under the cursor');
      const recordStarted = Date.now();
      const confirmed = await this.recorder.record(assets, cursor, range, watched, this.options.reorgWindowBlocks);
      const toBlock = range.blocks[range.blocks.length - 1].height;
      this.logger.debug({ blockchainId, fromBlock: cursor.blockNumber + 1, toBlock, transfers: range.transfers.length, scanMs: recordStarted - scanStarted, recordMs: Date.now() - recordStarted }, 'blocks scanned');
      if (confirmed.length) this.logger.info({ blockchainId, family: port.family, deposits: confirmed.length, toBlock }, 'deposits confirmed');
      return range.blocks.length;
    } catch (e) {
      if (e instanceof ChainMovedError || e instanceof CursorMovedError) return 0;
      throw e;
    }
  }

  /**
   * Scans from `from` up to `batch` blocks (at most to `final`). A scan that fails (a node that needs
   * longer than CHAIN_RPC_TIMEOUT_MS for the batch, or answers it too large) halves the batch for the
   * next step, down to one block; each success doubles it back towards CHAIN_SCAN_BATCH_BLOCKS.
   */
  private async scanNext(from: number, final: number, watch: ScanWatch) {
    try {
      const range = await this.network.port.scan(from, Math.min(final, from - 1 + this.batch), watch, 'final');
      this.batch = Math.min(this.options.batchBlocks, this.batch * 2);
      return range;
    } catch (e) {
      if (!(e instanceof ChainMovedError)) this.batch = Math.max(1, Math.floor(this.batch / 2));
      throw e;
    }
  }

  /** The newest block at or below `height` (Solana's skipped slots have none). */
  private async blockAtOrBelow(height: number): Promise<{ height: number; hash: string } | undefined> {
    for (let h = height; h >= Math.max(0, height - SKIPPED_SLOTS_LOOKBACK); h--) {
      const at = await this.network.port.blockAt(h, 'final');
      if (typeof at === 'object') return { height: h, hash: at.hash };
    }
    return undefined;
  }

  /**
   * Finds the newest recorded block still on the canonical chain and rewinds everything above it.
   * Only blocks the node shows forked are rewound: one it cannot answer for (it fell behind since
   * the cursor was checked) ends the walk with nothing rewound, to be walked again once it answers.
   */
  private async walkBack(cursor: ChainCursor): Promise<void> {
    const { port, blockchainId } = this.network;
    const recent = await this.recorder.recentBlocks(blockchainId);
    let ancestor: ChainCursor | undefined;
    for (const b of recent) {
      const state = recordedBlock(await port.blockAt(b.blockNumber, 'final'), b.blockHash);
      if (state === 'unknown') return;
      if (state === 'canonical') {
        ancestor = b;
        break;
      }
    }
    if (!ancestor) {
      // Deeper than the reorg window: resume from below the oldest block we remember, as the chain has it now.
      const oldest = recent[recent.length - 1]?.blockNumber ?? cursor.blockNumber;
      const block = await this.blockAtOrBelow(Math.min(await port.height('final'), Math.max(0, oldest - 1)));
      if (!block) return;
      ancestor = { blockNumber: block.height, blockHash: block.hash };
      this.logger.error({ blockchainId, fromBlock: cursor.blockNumber, toBlock: ancestor.blockNumber }, 'reorg deeper than CHAIN_REORG_WINDOW_BLOCKS');
    }
    const [assets, watched] = await Promise.all([this.assets(), this.wallets.on(blockchainId)]);
    try {
      const reverted = await this.recorder.rewind(assets, cursor, ancestor, watched);
      this.logger.warn({ blockchainId, fromBlock: cursor.blockNumber, toBlock: ancestor.blockNumber, revertedDeposits: reverted.length }, 'chain reorganised; rewound');
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

/** One watcher per chain of the deployment, either family. */
export function startDepositWatchers<N>(networks: N[], make: (n: N) => { start(): { stop(): Promise<void> } }): { stop(): Promise<void> } {
  const loops = networks.map((n) => make(n).start());
  return { stop: () => Promise.all(loops.map((l) => l.stop())).then(() => undefined) };
}
