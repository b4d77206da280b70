import { Knex } from 'knex';
import type { Outbox } from '../../platform/events/outbox';
import type { ChainNetwork } from '../chains';
import type { SettlementDeployments } from './settlement-deployments';
import { reconcileChain, ReconcileLine, ReconcileOptions, ReconcileReport } from './reconciliation';

/** Reconciliation of a chain against the ledger, with the chain's settlement contract looked up. */
export class SettlementReconciler {
  constructor(
    private readonly db: Knex,
    private readonly deployments: SettlementDeployments,
    private readonly outbox: Outbox,
  ) {}

  async reconcile(network: ChainNetwork, opts: ReconcileOptions = {}): Promise<ReconcileReport> {
    return reconcileChain(this.db, network, await this.deployments.address(network.blockchainId), opts);
  }

  /** Tells each wallet's organisation of a lasting difference: a `trading_balance.difference` event per line (custody lines too). */
  async report(lines: ReconcileLine[]): Promise<void> {
    if (!lines.length) return;
    await this.outbox.publishMany(
      this.db,
      lines.map((l) => ({ organizationId: l.organizationId, type: 'trading_balance.difference', data: { ...l } })),
    );
  }
}
