import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import type { Logger } from '../../platform/logger';
import type { Metrics } from '../../platform/metrics';
import type { Worker } from '../../platform/worker';
import { startPollingLoop } from '../../platform/polling-loop';
import type { ChainNetwork, ChainNetworks } from '../chains';
import type { SettlementBatcher } from './batcher';
import type { SettlementDeployments } from './settlement-deployments';
import type { SettlementReconciler } from './settlement-reconciler';
import type { TradingDepositReorgs } from './trading-deposit-reorgs';
import type { TradingExits } from './trading-exits';
import { ChainLease, LeaseLost } from './chain-lease';

export interface SettlementWorkerOptions {
  pollIntervalMs: number;
  leaseMs: number;
  reconcileIntervalMs: number;
}

/**
 * The worker role's settlement: on start, the contract is deployed on dev chains that lack it; then
 * each chain's batcher steps under a fenced lease in PostgreSQL (ChainLease: two workers never settle
 * one chain at once; the other takes over when the lease lapses, and the step renews it between
 * phases and commits every change only under it), after each step the contract's exit requests are
 * read (TradingExits: a wallet that asked to exit places no more orders there), and the reconciliation runs periodically on
 * every worker (custody too, on chains without a contract, so not under the lease; what it found and
 * told is kept in PostgreSQL) and exports its count of differences as a metric, after a look for
 * confirmed deposits to trading a deep reorg took off the chain (TradingDepositReorgs: alarmed and sent again).
 */
export class SettlementWorker implements Worker {
  private readonly holder = randomUUID();
  private loops: { stop(): Promise<void> }[] = [];
  /** Per chain, the lease this worker holds, kept from step to step until it is lost. */
  private readonly leases = new Map<string, ChainLease>();

  constructor(
    private readonly db: Knex,
    private readonly networks: ChainNetworks,
    private readonly deployments: SettlementDeployments,
    private readonly batcher: SettlementBatcher,
    private readonly reconciler: SettlementReconciler,
    private readonly depositReorgs: TradingDepositReorgs,
    private readonly exits: TradingExits,
    private readonly metrics: Metrics,
    private readonly options: SettlementWorkerOptions,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    for (const network of this.networks.all()) await this.deployments.ensureOnDevChain(network);
    const warn = (what: string) => (e: unknown) => this.logger.warn({ err: e }, `settlement: ${what} failed, retrying`);
    this.loops = [startPollingLoop(() => this.tick(), this.options.pollIntervalMs, warn('batcher step')), startPollingLoop(() => this.reconcile(), this.options.reconcileIntervalMs, warn('reconciliation'))];
  }

  async stop(): Promise<void> {
    await Promise.all(this.loops.map((l) => l.stop()));
    this.loops = [];
    this.leases.clear();
    await this.db('settlement_leases').where({ holder: this.holder }).delete().catch(() => undefined);
  }

  async tick(): Promise<void> {
    for (const network of this.networks.all()) {
      const d = await this.deployments.get(network);
      if (!d) continue;
      const lease = await this.leaseOf(network.blockchainId);
      if (!lease) continue;
      try {
        await this.batcher.step(d, lease);
        await this.watchExits(d.network);
      } catch (e) {
        if (!(e instanceof LeaseLost)) throw e;
        this.leases.delete(network.blockchainId);
        this.logger.warn({ blockchainId: network.blockchainId, err: e }, 'settlement: the lease was lost mid-step; its holder now carries on');
      }
    }
  }

  /** Exits asked of the contract (TradingExits): a failure to look is logged and tried again at the next step, the batcher's steps going on. */
  private async watchExits(network: ChainNetwork): Promise<void> {
    try {
      await this.exits.watch(network);
    } catch (e) {
      this.logger.warn({ blockchainId: network.blockchainId, err: e }, 'settlement: reading exit requests from the contract failed, retrying');
    }
  }

  /** The chain's lease: the one held, renewed when due, or taken again (null while another worker holds it). */
  private async leaseOf(blockchainId: string): Promise<ChainLease | null> {
    const held = this.leases.get(blockchainId);
    if (held) {
      try {
        await held.renew();
        return held;
      } catch (e) {
        if (!(e instanceof LeaseLost)) throw e;
        this.leases.delete(blockchainId);
      }
    }
    const taken = await ChainLease.take(this.db, blockchainId, this.holder, this.options.leaseMs);
    if (taken) this.leases.set(blockchainId, taken);
    return taken;
  }

  /**
   * One run of the reconciliation of every chain (SettlementReconciler.check, shared by the workers
   * through PostgreSQL): the differences that last, found again at least a run interval after a run
   * first found them, are counted, logged and told to their organisation once. Money in flight (a
   * deposit waiting for its confirmations, a transfer between its receipt and its gas charge)
   * differs for a moment and is not what the metric is for.
   */
  async reconcile(): Promise<void> {
    for (const network of this.networks.all()) {
      const chain = network.spec.slug;
      try {
        await this.depositReorgs.check(network);
        const { lasting } = await this.reconciler.check(network, this.options.reconcileIntervalMs);
        this.metrics.settlementDifferences.set({ chain }, lasting.length);
        this.metrics.settlementReconciliations.inc({ chain, outcome: lasting.length ? 'differences' : 'clean' });
        const sample = lasting.slice(0, 3).map((d) => `${d.walletId}|${d.assetId}|${d.account}|${d.difference}`);
        if (lasting.length) this.logger.warn({ chain, differences: lasting.length, sample }, 'reconciliation: on-chain balances differ from the ledger');
      } catch (e) {
        this.metrics.settlementReconciliations.inc({ chain, outcome: 'error' });
        throw e;
      }
    }
  }
}
