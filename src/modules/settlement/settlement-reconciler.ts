import { Knex } from 'knex';
import type { ChainNetwork } from '../chains/chain-networks';
import type { SettlementDeployments } from './settlement-deployments';
import { reconcileChain, ReconcileOptions, ReconcileReport } from './reconciliation';

/** Reconciliation of a chain against the ledger, with the chain's settlement contract looked up. */
export class SettlementReconciler {
  constructor(
    private readonly db: Knex,
    private readonly deployments: SettlementDeployments,
  ) {}

  async reconcile(network: ChainNetwork, opts: ReconcileOptions = {}): Promise<ReconcileReport> {
    return reconcileChain(this.db, network, await this.deployments.address(network.blockchainId), opts);
  }
}
