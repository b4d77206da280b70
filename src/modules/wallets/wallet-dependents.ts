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
  /** Checkouts into the wallet on these chains whose addresses are still watched for them (not retired yet); at most `limit`, and how many in all. */
  openCheckouts(trx: Knex.Transaction, walletId: string, blockchainIds: string[], limit: number): Promise<{ checkouts: OpenCheckout[]; total: number }>;
}

/** A checkout a payer may still pay, or whose payment or sweep is still on its way. */
export interface OpenCheckout {
  /** The checkout's id: a payment link's session id. */
  id: string;
  blockchainId: string;
  paymentLinkId: string | null;
  paymentIntentId: string | null;
  expiresAt: Date;
}
