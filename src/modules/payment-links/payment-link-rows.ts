import type { Knex } from 'knex';

/** How many payment links (not deleted) settle into each of these wallets, in the caller's transaction; wallets with none are absent. The payment_links table is this module's. */
export async function paymentLinksByWallet(trx: Knex | Knex.Transaction, walletIds: string[]): Promise<Map<string, number>> {
  const counts = await trx('payment_links').whereIn('evm_settlement_wallet_id', walletIds).whereNull('deleted_at').groupBy('evm_settlement_wallet_id').select('evm_settlement_wallet_id').count<{ evmSettlementWalletId: string; count: string }[]>('* as count');
  return new Map(counts.map((c) => [c.evmSettlementWalletId, Number(c.count)]));
}
