import type { Knex } from 'knex';

/**
 * What other modules hang on master wallets, counted per wallet by the modules that own it, in the
 * caller's transaction: a port this module owns, wired in the composition root (src/services.ts),
 * since those modules stand above this one.
 */
export interface WalletDependents {
  /** Payment links (not deleted) that settle into each wallet; wallets with none are absent. */
  paymentLinks(trx: Knex | Knex.Transaction, walletIds: string[]): Promise<Map<string, number>>;
  /** Active settlement rules (not deleted) of each wallet; wallets with none are absent. */
  settlementRules(trx: Knex | Knex.Transaction, walletIds: string[]): Promise<Map<string, number>>;
}
