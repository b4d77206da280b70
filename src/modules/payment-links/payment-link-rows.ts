import type { Knex } from 'knex';

/**
 * How many payment links (not deleted) settle into each of these wallets, in the caller's transaction; wallets with none are absent.
 * A link settles into its EVM wallet and into its Solana wallet when it names one: each counts it (as listing links by the wallet lists it).
 * The payment_links table is this module's.
 */
export async function paymentLinksByWallet(trx: Knex | Knex.Transaction, walletIds: string[]): Promise<Map<string, number>> {
  if (!walletIds.length) return new Map();
  const settling = trx('payment_links')
    .whereNull('deleted_at')
    .whereIn('evm_settlement_wallet_id', walletIds)
    .select('evm_settlement_wallet_id as wallet_id')
    .unionAll((u) => u.from('payment_links').whereNull('deleted_at').whereIn('solana_settlement_wallet_id', walletIds).select('solana_settlement_wallet_id as wallet_id'), true);
  const counts = await trx.from(settling.as('settling')).groupBy('wallet_id').select('wallet_id').count<{ walletId: string; count: string }[]>('* as count');
  return new Map(counts.map((c) => [c.walletId, Number(c.count)]));
}
