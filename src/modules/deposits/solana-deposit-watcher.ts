import { createHash } from 'node:crypto';
import type { Logger } from '../../platform/logger';
import { startPollingLoop } from '../../platform/polling-loop';
import type { IncomingTransfer } from '../../platform/chain-port/chain-port';
import type { ChainService, SolanaNetwork } from '../chains';
import type { WatchedWallets } from '../wallets';
import { ChainActivityRecorder, CursorMovedError } from './chain-activity-recorder';
import type { ObservedTransfer, ScannedRange } from './block-scanner';
import type { ChainCursor } from './chain-transfer.model';
import { chainAssetsOf, type DepositWatcherOptions } from './deposit-watcher';

/**
 * Follows one Solana cluster through its chain port (issue 35): scans each slot once it is
 * `finalized` (the commitment Keel credits at) for transfers into watched addresses, and records
 * them through the same ChainActivityRecorder as EVM deposits (one cursor, exactly once by the
 * transfer's key, the same listeners and address.* / master.* incoming_transfer events). A deposit
 * whose slot is rolled back before finality is never recorded, so never credited; should a recorded
 * slot's hash ever change (a cluster reset), the watcher walks back and the recorder reverts what it
 * had recorded above the newest slot both agree on, as for an EVM reorg.
 *
 * This and DepositWatcher are the deposits module's one branch on the chain family: EVM moves behind
 * the chain port next (issue 35) and the two become one watcher over ChainPort.
 */
export class SolanaDepositWatcher {
  private readonly recorder: ChainActivityRecorder;
  private readonly chains: ChainService;
  private readonly wallets: WatchedWallets;
  private readonly options: DepositWatcherOptions;
  private readonly logger: Logger;

  constructor(
    private readonly network: SolanaNetwork,
    deps: { recorder: ChainActivityRecorder; chains: ChainService; wallets: WatchedWallets; options: DepositWatcherOptions; logger: Logger },
  ) {
    ({ recorder: this.recorder, chains: this.chains, wallets: this.wallets, options: this.options, logger: this.logger } = deps);
  }

  start(): { stop(): Promise<void> } {
    return startPollingLoop(() => this.tick(), this.options.pollIntervalMs, (e) =>
      this.logger.warn({ blockchainId: this.network.blockchainId, err: e instanceof Error ? e.message : String(e) }, 'solana deposit watcher: scan failed, retrying'),
    );
  }

  /** One step: walk back if the cursor's slot changed, or scan the next finalized slots. Returns slots recorded. */
  async tick(): Promise<number> {
    const { port, blockchainId } = this.network;
    const final = await port.height('final');
    const cursor = await this.recorder.cursor(blockchainId);
    if (!cursor) {
      const first = await this.firstBlockFrom(final);
      if (first) await this.recorder.startAt(blockchainId, { number: first.height, hash: first.hash, parentHash: '', timestamp: new Date() });
      return 0;
    }
    if ((await port.blockHash(cursor.blockNumber, 'final')) !== cursor.blockHash) {
      await this.walkBack(cursor);
      return 0;
    }
    if (final <= cursor.blockNumber) return 0;
    const [assets, watched] = await Promise.all([chainAssetsOf(this.chains, blockchainId), this.wallets.on(blockchainId)]);
    const owners = new Set([...watched.values()].map((w) => w.walletAddress));
    let scanned = await port.scanIncoming(cursor.blockNumber + 1, Math.min(final, cursor.blockNumber + this.options.batchBlocks), owners, 'final');
    // A batch of skipped slots only: look on to the finalized head (the cursor needs a block to stand on).
    if (!scanned.blocks.length) scanned = await port.scanIncoming(cursor.blockNumber + 1, final, owners, 'final');
    if (!scanned.blocks.length) return 0;
    const range: ScannedRange = {
      blocks: scanned.blocks.map((b) => ({ number: b.height, hash: b.hash, parentHash: '', timestamp: new Date() })),
      transfers: scanned.transfers.map(observed),
    };
    try {
      const confirmed = await this.recorder.record(assets, cursor, range, watched, this.options.reorgWindowBlocks);
      if (confirmed.length) this.logger.info({ blockchainId, deposits: confirmed.length, toSlot: range.blocks[range.blocks.length - 1].number }, 'solana deposits finalized');
      return range.blocks.length;
    } catch (e) {
      if (e instanceof CursorMovedError) return 0;
      throw e;
    }
  }

  /** The first block at or below `height` (skipped slots have none). */
  private async firstBlockFrom(height: number): Promise<{ height: number; hash: string } | undefined> {
    for (let h = height; h >= Math.max(0, height - 64); h--) {
      const hash = await this.network.port.blockHash(h, 'final');
      if (hash) return { height: h, hash };
    }
    return undefined;
  }

  /** Finds the newest recorded slot whose block is unchanged and has the recorder revert everything above it. */
  private async walkBack(cursor: ChainCursor): Promise<void> {
    const { port, blockchainId } = this.network;
    let ancestor: ChainCursor | undefined;
    for (const b of await this.recorder.recentBlocks(blockchainId)) {
      if ((await port.blockHash(b.blockNumber, 'final')) === b.blockHash) {
        ancestor = b;
        break;
      }
    }
    if (!ancestor) {
      // None of the recorded slots is as recorded: stand on the cluster's newest finalized block at or below the cursor.
      const first = await this.firstBlockFrom(Math.min(await port.height('final'), cursor.blockNumber));
      if (!first) return;
      ancestor = { blockNumber: first.height, blockHash: first.hash };
      this.logger.error({ blockchainId, fromSlot: cursor.blockNumber, toSlot: ancestor.blockNumber }, 'solana cluster changed deeper than CHAIN_REORG_WINDOW_BLOCKS');
    }
    const [assets, watched] = await Promise.all([chainAssetsOf(this.chains, blockchainId), this.wallets.on(blockchainId)]);
    try {
      const reverted = await this.recorder.rewind(assets, cursor, ancestor, watched);
      this.logger.warn({ blockchainId, fromSlot: cursor.blockNumber, toSlot: ancestor.blockNumber, revertedDeposits: reverted.length }, 'solana slots changed; rewound');
    } catch (e) {
      if (!(e instanceof CursorMovedError)) throw e;
    }
  }
}

/**
 * A transfer the port reported, in the recorder's terms: the mint is the token; the position (e.g.
 * `token:<mint>:<owner>`) gives a log index that is the same on every scan (a 31-bit digest: the
 * recorder's key is chain, signature, log index, batch index, direction).
 */
function observed(t: IncomingTransfer): ObservedTransfer {
  return {
    txHash: t.txId,
    logIndex: createHash('sha256').update(t.position).digest().readUInt32BE(0) >>> 1,
    blockNumber: t.height,
    blockHash: t.blockHash,
    blockTimestamp: new Date(t.timestamp * 1000),
    from: t.from ?? '',
    to: t.to,
    rawValue: t.amount,
    token: t.asset.kind === 'token' ? t.asset.address : null,
    batchIndex: 0,
  };
}
