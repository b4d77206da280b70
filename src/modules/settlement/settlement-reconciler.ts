import { Knex } from 'knex';
import { lockUntilCommit } from '../../platform/db/advisory-lock';
import type { Outbox } from '../../platform/events/outbox';
import type { ChainNetwork } from '../chains';
import type { SettlementDeployments } from './settlement-deployments';
import { reconcileChain, ReconcileLine, ReconcileOptions, ReconcileReport } from './reconciliation';

/** What one run of the worker's check found: every difference, and those lasting. */
export interface ReconcileCheck {
  found: ReconcileLine[];
  /** Found by an earlier run too, at least the run interval before this one began reading. */
  lasting: ReconcileLine[];
}

const lineKey = (l: { walletId: string; assetId: string; account: string }) => `${l.walletId}|${l.assetId}|${l.account}`;

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

  /**
   * The worker's periodic check of a chain, by any of the workers: reconciles it and keeps what it
   * found in `settlement_differences`, in one transaction per run under the chain's advisory lock. A
   * difference not recorded yet, or recorded with another amount, is recorded as first found now; one
   * no longer found is removed. A difference recorded by a run at least `lastingAfterMs` before this
   * one began reading lasts (money in flight, a deposit waiting for its confirmations or a transfer
   * between its receipt and its gas charge, differs for a moment only) and is told to its wallet's
   * organisation once, as a `trading_balance.difference` event (custody lines too) in the transaction
   * that marks it told: not again while it lasts, whichever worker looks and after restarts; again
   * when its amount changes, or once it went away and came back.
   */
  async check(network: ChainNetwork, lastingAfterMs: number): Promise<ReconcileCheck> {
    const { blockchainId } = network;
    const startedAt: Date = (await this.db.raw('SELECT now() AS started_at')).rows[0].started_at;
    const { differences: found } = await this.reconcile(network);
    const lastingKeys = await this.db.transaction(async (trx) => {
      await lockUntilCommit(trx, [`settlement-differences:${blockchainId}`]);
      if (found.length) {
        await trx('settlement_differences')
          .insert(found.map((l) => ({ blockchainId, walletId: l.walletId, assetId: l.assetId, account: l.account, difference: l.difference })))
          .onConflict(['blockchain_id', 'wallet_id', 'asset_id', 'account'])
          .merge({ difference: trx.raw('excluded.difference'), firstSeenAt: trx.fn.now(), toldAt: null })
          .where('settlement_differences.difference', '<>', trx.raw('excluded.difference'));
      }
      const gone = trx('settlement_differences').where({ blockchainId });
      if (found.length) gone.whereNotIn(['walletId', 'assetId', 'account'], found.map((l) => [l.walletId, l.assetId, l.account]));
      await gone.delete();
      const lastingSince = new Date(startedAt.getTime() - lastingAfterMs);
      const lasting = trx('settlement_differences').where({ blockchainId }).where('firstSeenAt', '<=', lastingSince);
      const told: { walletId: string; assetId: string; account: string }[] = await lasting.clone().whereNull('toldAt').update({ toldAt: trx.fn.now() }).returning(['walletId', 'assetId', 'account']);
      const toTell = new Set(told.map(lineKey));
      await this.outbox.publishMany(
        trx,
        found.filter((l) => toTell.has(lineKey(l))).map((l) => ({ organizationId: l.organizationId, type: 'trading_balance.difference', data: { ...l } })),
      );
      return new Set((await lasting.clone().select('walletId', 'assetId', 'account')).map(lineKey));
    });
    return { found, lasting: found.filter((l) => lastingKeys.has(lineKey(l))) };
  }
}
