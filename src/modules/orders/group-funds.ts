import { Knex } from 'knex';
import type { LedgerService } from '../ledger';

/**
 * Available balances as one group of placements sees them: the committed balance less what the
 * earlier placements of the group lock. (What the group's fills would pay out is not counted, so a
 * group never promises more than the ledger will allow.)
 */
export class GroupFunds {
  private readonly committed = new Map<string, Promise<bigint>>();
  private readonly reserved = new Map<string, bigint>();

  constructor(
    private readonly ledger: LedgerService,
    private readonly db: Knex,
  ) {}

  async available(walletId: string, assetId: string): Promise<bigint> {
    const key = `${walletId}|${assetId}`;
    this.prefetch([{ walletId, assetId }]);
    return (await this.committed.get(key)!) - (this.reserved.get(key) ?? 0n);
  }

  /** Reads the committed balances a group will ask for in one query rather than one each. */
  prefetch(keys: { walletId: string; assetId: string }[]): void {
    const missing = keys.filter((k) => !this.committed.has(`${k.walletId}|${k.assetId}`));
    if (!missing.length) return;
    const read = this.ledger.availableMany(this.db, missing);
    for (const k of missing) {
      const key = `${k.walletId}|${k.assetId}`;
      const amount = read.then((found) => found.get(key) ?? 0n);
      // A placement refused before it asks for its balance never awaits this: a failed read must not go unhandled.
      amount.catch(() => undefined);
      this.committed.set(key, amount);
    }
  }

  reserve(walletId: string, assetId: string, amount: bigint): void {
    const key = `${walletId}|${assetId}`;
    this.reserved.set(key, (this.reserved.get(key) ?? 0n) + amount);
  }
}
