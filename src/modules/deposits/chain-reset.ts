import { Knex } from 'knex';
import type { Logger } from '../../platform/logger';
import { assetIdsOfChain, recordGenesisHash, recordedGenesisHash, type ChainNetwork, type ChainNetworks } from '../chains';
import type { ChainFee, DepositListener, OutflowListener } from './chain-activity-recorder';
import { ChainTransferModel } from './chain-transfer.model';
import { withinMs } from '../../platform/time-bound';

/** Why Keel takes a chain for reset rather than reorganised. */
export type ChainResetReason = 'genesis-changed' | 'cursor-block-gone';

export interface ChainResetOutcome {
  reason: ChainResetReason;
  revertedDeposits: number;
  cancelledOrders: number;
  /** Transfer lines signed on the old chain and not final there, queued to be signed again on the new one. */
  linesSignedAgain: number;
  /** Per asset id: what the ledger still holds of the chain's assets after the reversals, in base units: money no chain backs. */
  unbacked: Record<string, string>;
}

/** How long the start waits for a chain's block 0 before going on without the check. */
const GENESIS_TIMEOUT_MS = 10_000;

/** Cancels the live orders that lock any of these assets (their locks released). */
export interface OrderCanceller {
  cancelLocking(assetIds: string[]): Promise<string[]>;
}

/** Gives back to custody what trading held of the chain's assets (the settlement contract went with the chain). */
export interface TradingReset {
  tradingBackToCustody(trx: Knex.Transaction, assetIds: string[], reference: string): Promise<void>;
}

/** Starts sending on a reset chain afresh: its lines signed but not final queued again, its nonce counts forgotten (how many lines). */
export interface SendingReset {
  signAgainAfterChainReset(trx: Knex.Transaction, blockchainId: string, chainKnows: (txHash: string) => Promise<boolean>): Promise<number>;
}

/** What the ledger holds of assets, per asset id in base units; assets it holds none of are absent. */
export interface LedgerHoldings {
  heldOf(assetIds: string[]): Promise<Record<string, string>>;
}

/**
 * A chain that was reset (a dev chain started afresh) is not a reorg of every block: at start Keel
 * compares the chain's genesis hash with the one it recorded (and, for a dev chain it started
 * itself, the block at the watcher's cursor). On a reset the ledger follows the chain: orders that
 * lock the chain's assets are cancelled, trading balances go back to custody (the settlement
 * contract went with the chain), every deposit Keel confirmed on it is reverted and its
 * credit taken back at once (not block by block) and every outflow's debit, and every fee's, given back, transfer lines signed there and not final are
 * queued to be signed again on the new chain (nonce counts start from the new chain's), and the
 * watcher restarts from the new chain's head. What the ledger still holds of those assets (credits already traded away or sent) is
 * reported as unbacked. Re-running after a crash is safe: the reset is recorded last, in the same
 * transaction as the reversals.
 */
export class ChainResetReconciler {
  constructor(
    private readonly db: Knex,
    private readonly deposits: DepositListener & OutflowListener,
    private readonly orders: OrderCanceller,
    private readonly logger: Logger,
    private readonly ledger: TradingReset & LedgerHoldings,
    private readonly sending: SendingReset,
  ) {}

  /**
   * Checks every chain before Keel serves. A chain Keel cannot reach now is not checked (a warning
   * says so) and Keel starts anyway, as it did before: its watcher retries until the chain answers.
   */
  async reconcileAll(networks: ChainNetworks): Promise<void> {
    for (const n of networks.all()) {
      const startedHere = networks.startedHere(n);
      try {
        await this.reconcile(n, startedHere);
      } catch (e) {
        if (startedHere || !(e instanceof ChainUnreachableError)) throw e;
        this.logger.warn({ chainId: n.spec.chainId, err: e }, 'chain identity not checked: the chain did not answer');
      }
    }
  }

  /** `startedHere`: a dev chain this process started, whose history cannot legitimately reorganise across a restart. */
  async reconcile(network: ChainNetwork, startedHere: boolean): Promise<ChainResetOutcome | undefined> {
    const { blockchainId, spec } = network;
    const genesis = await genesisHash(network);
    const recorded = await this.identity(this.db, blockchainId);
    const reason = await this.resetReason(network, recorded, genesis, startedHere);
    if (!reason) {
      if (recorded.genesisHash !== genesis) await recordGenesisHash(this.db, blockchainId, genesis);
      return undefined;
    }
    const assetIds = await assetIdsOfChain(this.db, blockchainId);
    const cancelled = await this.orders.cancelLocking(assetIds);
    const done = await this.db.transaction(async (trx) => {
      const now = await this.identity(trx, blockchainId, true);
      if (now.genesisHash !== recorded.genesisHash || now.cursorHash !== recorded.cursorHash) return undefined; // another process reconciled it
      const rows = await trx('chain_transfers').where({ blockchainId, status: 'CONFIRMED' }).update({ status: 'REVERTED', revertedAt: trx.fn.now() }).returning('*');
      const transfers = rows.map((r) => ChainTransferModel.fromDatabaseJson(r as never));
      const deposits = transfers.filter((t) => t.direction === 'incoming');
      const outflows = transfers.filter((t) => t.direction === 'outgoing');
      // Trading balances were deposits too, moved into a contract that is gone: back at the addresses, reversed with them.
      await this.ledger.tradingBackToCustody(trx, assetIds, `chain-reset:${blockchainId}:${genesis}`);
      // What outflows Keel did not send debited, and the fees of its transactions, is given back first, as a reorg does (ChainActivityRecorder.rewind).
      if (outflows.length) await this.deposits.outflowsReverted(trx, outflows);
      const fees: ChainFee[] = await trx('chain_fees').where({ blockchainId, status: 'CONFIRMED' }).update({ status: 'REVERTED', revertedAt: trx.fn.now() }).returning('*');
      if (fees.length) await this.deposits.feesReverted(trx, fees);
      if (deposits.length) await this.deposits.reverted(trx, deposits);
      // A hash the new chain's node cannot answer for counts as known: the line is left to the sender.
      const linesSignedAgain = await this.sending.signAgainAfterChainReset(trx, blockchainId, (hash) => network.port.knows(hash).catch(() => true));
      await trx('chain_blocks').where({ blockchainId }).delete();
      await trx('chain_cursors').where({ blockchainId }).delete();
      await recordGenesisHash(trx, blockchainId, genesis);
      return { revertedDeposits: deposits.length, linesSignedAgain };
    });
    if (done === undefined) return undefined;
    const outcome: ChainResetOutcome = { reason, ...done, cancelledOrders: cancelled.length, unbacked: await this.ledger.heldOf(assetIds) };
    this.logger.error(
      { chainId: spec.chainId, ...outcome, recordedGenesis: recorded.genesisHash, genesis, cursorBlock: recorded.cursorBlock },
      'chain reset: the chain no longer holds the history Keel recorded; its deposits were taken back at once, orders locking its assets cancelled, and the watcher restarts from the new head',
    );
    return outcome;
  }

  private async resetReason(network: ChainNetwork, recorded: Identity, genesis: string, startedHere: boolean): Promise<ChainResetReason | undefined> {
    if (recorded.genesisHash && recorded.genesisHash !== genesis) return 'genesis-changed';
    if (!startedHere || recorded.cursorBlock === null) return undefined;
    const atCursor = await network.provider.getBlock(recorded.cursorBlock);
    return atCursor?.hash === recorded.cursorHash ? undefined : 'cursor-block-gone';
  }

  private async identity(db: Knex, blockchainId: string, forUpdate = false): Promise<Identity> {
    const recordedGenesis = await recordedGenesisHash(db, blockchainId, forUpdate);
    const cursor = await db('chain_cursors').where({ blockchainId }).first();
    return { genesisHash: recordedGenesis, cursorBlock: cursor ? Number(cursor.blockNumber) : null, cursorHash: cursor?.blockHash ?? null };
  }
}

/** The chain did not give its block 0 (down, or too slow). */
class ChainUnreachableError extends Error {}

async function genesisHash({ provider, spec }: ChainNetwork): Promise<string> {
  const block = await withinMs(provider.getBlock(0), GENESIS_TIMEOUT_MS, `chain ${spec.chainId}`).catch((e: Error) => Promise.reject(new ChainUnreachableError(e.message)));
  if (!block?.hash) throw new ChainUnreachableError(`chain ${spec.chainId} has no block 0`);
  return block.hash;
}

interface Identity {
  genesisHash: string | null;
  cursorBlock: number | null;
  cursorHash: string | null;
}
