import type { Knex } from 'knex';

/** How many active settlement rules (not deleted) each of these wallets has, in the caller's transaction; wallets with none are absent. The settlement_rules table is this module's. */
export async function activeRulesByWallet(trx: Knex | Knex.Transaction, walletIds: string[]): Promise<Map<string, number>> {
  const counts = await trx('settlement_rules').whereIn('master_wallet_id', walletIds).whereNull('deleted_at').where('is_active', true).groupBy('master_wallet_id').select('master_wallet_id').count<{ masterWalletId: string; count: string }[]>('* as count');
  return new Map(counts.map((c) => [c.masterWalletId, Number(c.count)]));
}
