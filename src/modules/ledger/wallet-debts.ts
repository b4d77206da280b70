import { Knex } from 'knex';
import type { Outbox } from '../../platform/events/outbox';
import type { Metrics } from '../../platform/metrics';
import type { LedgerAccount, LedgerService } from './ledger.service';

/** A wallet's debt in one asset and ledger account, or a change to it: base units. */
export interface DebtChange {
  organizationId: string;
  walletId: string;
  assetId: string;
  /** The account whose credit a reorg took back: it owes the debt, and its credits repay it. */
  account: LedgerAccount;
  amount: bigint;
  /** What caused it (the deposit's ledger reference): makes each change happen once. */
  reference: string;
}

/**
 * Debts: what a chain reorg took back from a wallet's account beyond what it still had available
 * (the credit's funds were withdrawn or locked in orders), per asset and account: custody (a
 * deposit, a payout from trading to the address) or trading (the refund of a reverted payout). The
 * account's next credits from the chain in the asset repay it first, and while any is owed the
 * asset has nothing spendable in that account (LedgerService.availableMany).
 * Every change is journalled in the ledger (the repayment is a debit) and reported as an event.
 */
export class WalletDebts {
  constructor(
    private readonly ledger: LedgerService,
    private readonly outbox: Outbox,
    private readonly metrics: Metrics,
  ) {}

  /** Adds to the wallet's debt: called once per reversed deposit (the reversal is idempotent). */
  async record(trx: Knex.Transaction, change: DebtChange): Promise<void> {
    const [row] = await trx('wallet_debts')
      .insert({ walletId: change.walletId, assetId: change.assetId, account: change.account, organizationId: change.organizationId, amount: change.amount.toString() })
      .onConflict(['wallet_id', 'asset_id', 'account'])
      .merge({ amount: trx.raw('wallet_debts.amount + excluded.amount'), updatedAt: trx.fn.now() })
      .returning('amount');
    await this.report(trx, 'recorded', change, BigInt(row.amount));
  }

  /** Takes what the wallet owes in the asset and the credit's account out of the credit it has just received, up to the credit. */
  async repayFrom(trx: Knex.Transaction, credit: DebtChange): Promise<void> {
    const where = { walletId: credit.walletId, assetId: credit.assetId, account: credit.account };
    const debt = await trx('wallet_debts').where(where).forUpdate().first();
    const owed = debt ? BigInt(debt.amount) : 0n;
    if (owed === 0n) return;
    const repaid = owed < credit.amount ? owed : credit.amount;
    const { applied } = await this.ledger.debit(trx, { ...credit, amount: repaid, reference: `debt-repayment:${credit.reference}`, account: credit.account });
    if (!applied) return;
    await trx('wallet_debts').where(where).update({ amount: (owed - repaid).toString(), updatedAt: trx.fn.now() });
    await this.report(trx, 'repaid', { ...credit, amount: repaid }, owed - repaid);
  }

  private async report(trx: Knex.Transaction, event: 'recorded' | 'repaid', change: DebtChange, outstanding: bigint): Promise<void> {
    await this.outbox.publish(trx, {
      organizationId: change.organizationId,
      type: `wallet.debt_${event}`,
      data: { walletId: change.walletId, assetId: change.assetId, account: change.account, amount: change.amount.toString(), outstanding: outstanding.toString(), reference: change.reference },
    });
    // Counted once the change is committed, not for a transaction that rolls back.
    trx.executionPromise.then(() => this.metrics.walletDebts.inc({ event }), () => undefined);
  }
}
