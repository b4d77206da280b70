import { Knex } from 'knex';
import type { LedgerService } from '../ledger';
import { BatchedLookup } from './batched-lookup';

/**
 * Available balances as one group of placements sees them: the committed balance less what the
 * earlier placements of the group lock. (What the group's fills would pay out is not counted, so a
 * group never promises more than the ledger will allow.)
 */
export class GroupFunds {
  private readonly committed: BatchedLookup<BalanceKey, bigint>;
  private readonly reserved = new Map<string, bigint>();

  constructor(ledger: LedgerService, db: Knex) {
    this.committed = new BatchedLookup(balanceKey, (keys) => ledger.availableMany(db, keys));
  }

  async available(walletId: string, assetId: string): Promise<bigint> {
    return ((await this.committed.get({ walletId, assetId })) ?? 0n) - (this.reserved.get(balanceKey({ walletId, assetId })) ?? 0n);
  }

  /** Reads the committed balances a group will ask for in one query rather than one each. */
  prefetch(keys: BalanceKey[]): void {
    this.committed.prefetch(keys);
  }

  reserve(walletId: string, assetId: string, amount: bigint): void {
    const key = balanceKey({ walletId, assetId });
    this.reserved.set(key, (this.reserved.get(key) ?? 0n) + amount);
  }
}

interface BalanceKey {
  walletId: string;
  assetId: string;
}

/** As `LedgerService.availableMany` keys its answer. */
const balanceKey = (k: BalanceKey) => `${k.walletId}|${k.assetId}`;
