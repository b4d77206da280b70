import { Knex } from 'knex';
import * as m001 from './001_foundation';
import * as m002 from './002_webhooks';
import * as m003 from './003_custody';
import * as m004 from './004_chain_watch';
import * as m006 from './006_transfers';
import * as m005 from './005_trading';
import * as m007 from './007_statement_checks';
import * as m011 from './011_market_rules_version';
import * as m009 from './009_operator';
import * as m010 from './010_wallet_debts';
import * as m008 from './008_idempotency_results';
import { sealWebhookSecrets } from './012_sealed_secret_versions';
import type { MigrationContext } from './context';
import * as m013 from './013_chain_identity';
import * as m018 from './018_aml_screening';
import * as m019 from './019_agents';
import * as m016 from './016_payments';
import * as m017 from './017_swaps_and_settlement_rules';
import * as m014 from './014_orderbook_shards';
import * as m021 from './021_book_sequences';
import * as m015 from './015_settlement';
import * as m022 from './022_settlement_crash_safety';
import * as m023 from './023_settlement_funding_fee_bump';
import * as m024 from './024_settlement_release_block';
import * as m025 from './025_queued_trades_by_settlement_key';
import * as m026 from './026_checkout_transfer_assets';
import * as m027 from './027_checkout_address_retirement';
import * as m029 from './029_live_claims_key_rotations_slugs';
import * as m030 from './030_ledger_accounts';
import * as m031 from './031_trading_transfers';
import * as m032 from './032_order_write_path';
import * as m033 from './033_trading_deposit_reorgs';
import * as m040 from './040_monthly_quotas';
import * as m041 from './041_nft_transfers';
import * as m042 from './042_signing';
import * as m043 from './043_trading_deposit_coin';
import * as m044 from './044_order_state_updates';
import * as m045 from './045_journal_keys_partial';
import * as m046 from './046_chain_families';
import * as m047 from './047_checkout_solana_pay';
import * as m048 from './048_solana_transfers';
import * as m049 from './049_trade_write_checks';
import * as m050 from './050_settlement_status_updates_in_place';
import * as m051 from './051_outbox_notifies';
import * as m052 from './052_sweeps_due';
import * as m053 from './053_sweeps_arranged';
import * as m054 from './054_replaced_tx_hashes_index';
import * as m055 from './055_transfer_cancellation';
import * as m056 from './056_open_transfers_by_address';
import * as m057 from './057_settlement_batch_first_key';
import * as m058 from './058_chain_transfer_senders';
import * as m059 from './059_transfer_items_waiting_index';
import * as m060 from './060_webhook_delivery_lookups';
import * as m061 from './061_transfer_requesters';
import * as m062 from './062_agent_payment_approvals_window';
import * as m063 from './063_solana_blockhash_slot';
import * as m064 from './064_checkouts_awaiting_index';
import * as m065 from './065_trading_transfer_requesters';
import * as m066 from './066_trading_exits';
import * as m071 from './071_trading_withdrawal_payouts';
import * as m072 from './072_trading_withdrawal_fee_bumps';
import * as m073 from './073_wallet_debt_accounts';
import * as m079 from './079_settlement_previous_released';
import * as m081 from './081_chain_fees';
import * as m084 from './084_transfer_items_by_block';
import * as m085 from './085_payment_link_amounts_and_solana_wallets';
import * as m087 from './087_settlement_differences';
import * as m088 from './088_gas_charges';

/**
 * Migrations are listed here rather than discovered on disk, so the same list runs from
 * TypeScript sources (tests) and from the compiled build.
 */
const migrations: Record<string, Knex.Migration> = {
  '001_foundation': m001,
  '002_webhooks': m002,
  '003_custody': m003,
  '004_chain_watch': m004,
  '006_transfers': m006,
  '005_trading': m005,
  '007_statement_checks': m007,
  '011_market_rules_version': m011,
  '009_operator': m009,
  '010_wallet_debts': m010,
  '008_idempotency_results': m008,
  '013_chain_identity': m013,
  '018_aml_screening': m018,
  '019_agents': m019,
  '016_payments': m016,
  '017_swaps_and_settlement_rules': m017,
  '014_orderbook_shards': m014,
  '021_book_sequences': m021,
  '015_settlement': m015,
  '022_settlement_crash_safety': m022,
  '023_settlement_funding_fee_bump': m023,
  '024_settlement_release_block': m024,
  '025_queued_trades_by_settlement_key': m025,
  '026_checkout_transfer_assets': m026,
  '027_checkout_address_retirement': m027,
  '029_live_claims_key_rotations_slugs': m029,
  '030_ledger_accounts': m030,
  '031_trading_transfers': m031,
  '032_order_write_path': m032,
  '033_trading_deposit_reorgs': m033,
  '040_monthly_quotas': m040,
  '041_nft_transfers': m041,
  '042_signing': m042,
  '043_trading_deposit_coin': m043,
  '044_order_state_updates': m044,
  '045_journal_keys_partial': m045,
  '046_chain_families': m046,
  '047_checkout_solana_pay': m047,
  '048_solana_transfers': m048,
  '049_trade_write_checks': m049,
  '050_settlement_status_updates_in_place': m050,
  '051_outbox_notifies': m051,
  '052_sweeps_due': m052,
  '053_sweeps_arranged': m053,
  '054_replaced_tx_hashes_index': m054,
  '055_transfer_cancellation': m055,
  '056_open_transfers_by_address': m056,
  '057_settlement_batch_first_key': m057,
  '058_chain_transfer_senders': m058,
  '059_transfer_items_waiting_index': m059,
  '060_webhook_delivery_lookups': m060,
  '061_transfer_requesters': m061,
  '062_agent_payment_approvals_window': m062,
  '063_solana_blockhash_slot': m063,
  '064_checkouts_awaiting_index': m064,
  '065_trading_transfer_requesters': m065,
  '066_trading_exits': m066,
  '071_trading_withdrawal_payouts': m071,
  '072_trading_withdrawal_fee_bumps': m072,
  '073_wallet_debt_accounts': m073,
  '079_settlement_previous_released': m079,
  '081_chain_fees': m081,
  '084_transfer_items_by_block': m084,
  '085_payment_link_amounts_and_solana_wallets': m085,
  '087_settlement_differences': m087,
  '088_gas_charges': m088,
};

/** Migrations that rewrite data with a key take it from the context. */
const withContext: Record<string, (context: MigrationContext) => Knex.Migration> = {
  '012_sealed_secret_versions': sealWebhookSecrets,
};

export function migrationSource(context: MigrationContext = {}): Knex.MigrationSource<string> {
  return {
    getMigrations: async () => [...Object.keys(migrations), ...Object.keys(withContext)].sort(),
    getMigrationName: (name) => name,
    getMigration: async (name) => migrations[name] ?? withContext[name](context),
  };
}

