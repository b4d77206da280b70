import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Markets are per deployment (reference data like the asset registry); orders are per organisation.
    CREATE TABLE markets (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      symbol text NOT NULL UNIQUE,
      base_asset_id uuid NOT NULL REFERENCES assets(id),
      quote_asset_id uuid NOT NULL REFERENCES assets(id),
      tick_size numeric NOT NULL CHECK (tick_size > 0),
      lot_size numeric NOT NULL CHECK (lot_size > 0),
      min_notional numeric NOT NULL DEFAULT 0 CHECK (min_notional >= 0),
      maker_fee numeric NOT NULL DEFAULT 0 CHECK (maker_fee >= 0),
      taker_fee numeric NOT NULL DEFAULT 0 CHECK (taker_fee >= 0),
      status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'HALTED')),
      -- The matching engine's last event sequence, committed with that event's effects.
      sequence bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (base_asset_id <> quote_asset_id)
    );

    -- The internal ledger: what each wallet (a master wallet or a deposit address) may trade.
    -- Amounts are base units of the asset.
    CREATE TABLE ledger_balances (
      wallet_id uuid NOT NULL,
      asset_id uuid NOT NULL REFERENCES assets(id),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      available numeric(78, 0) NOT NULL DEFAULT 0 CONSTRAINT ledger_available_non_negative CHECK (available >= 0),
      locked numeric(78, 0) NOT NULL DEFAULT 0 CONSTRAINT ledger_locked_non_negative CHECK (locked >= 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (wallet_id, asset_id)
    );
    CREATE INDEX ledger_balances_org_idx ON ledger_balances (organization_id);

    -- Append-only journal. wallet_id NULL is the venue's fee account (kind 'fee').
    -- Invariant per asset: sum(balances) + sum(fee) = sum(credit) + sum(debit) (debits are negative).
    CREATE TABLE ledger_entries (
      id bigserial PRIMARY KEY,
      organization_id uuid,
      wallet_id uuid,
      asset_id uuid NOT NULL REFERENCES assets(id),
      kind text NOT NULL CHECK (kind IN ('credit', 'debit', 'lock', 'unlock', 'fill', 'fee')),
      available_delta numeric(78, 0) NOT NULL DEFAULT 0,
      locked_delta numeric(78, 0) NOT NULL DEFAULT 0,
      reference text NOT NULL,
      -- 'credit:<reference>', 'debit:<reference>', 'reversal:<reference>': one entry per key.
      idempotency_key text UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (wallet_id IS NOT NULL OR kind = 'fee')
    );
    CREATE INDEX ledger_entries_wallet_idx ON ledger_entries (wallet_id, asset_id, id);
    CREATE INDEX ledger_entries_asset_kind_idx ON ledger_entries (asset_id, kind);

    CREATE TABLE orders (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      market_id uuid NOT NULL REFERENCES markets(id),
      wallet_id uuid NOT NULL,
      client_order_id text,
      side text NOT NULL CHECK (side IN ('BUY', 'SELL')),
      type text NOT NULL CHECK (type IN ('LIMIT', 'MARKET')),
      time_in_force text NOT NULL CHECK (time_in_force IN ('GTC', 'IOC', 'FOK')),
      post_only boolean NOT NULL DEFAULT false,
      price numeric,
      quantity numeric NOT NULL,
      price_ticks bigint,
      quantity_lots bigint NOT NULL,
      remaining_lots bigint NOT NULL,
      filled_lots bigint NOT NULL DEFAULT 0,
      -- Sum of ticks x lots over the order's fills (average price = this / filled_lots x tick size).
      filled_notional numeric(78, 0) NOT NULL DEFAULT 0,
      -- Fees the order paid, in base units of the quote asset.
      fees_paid numeric(78, 0) NOT NULL DEFAULT 0,
      status text NOT NULL CHECK (status IN ('OPEN', 'PARTIALLY_FILLED', 'FILLED', 'CANCELLED', 'REJECTED', 'EXPIRED')),
      status_reason text,
      lock_asset_id uuid REFERENCES assets(id),
      -- What is still locked for this order, in base units of lock_asset_id.
      locked_amount numeric(78, 0) NOT NULL DEFAULT 0,
      sequence bigint NOT NULL,
      -- Time priority in the book: the sequence of the event that rested the order.
      rest_sequence bigint,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX orders_client_order_id_idx ON orders (organization_id, client_order_id) WHERE client_order_id IS NOT NULL;
    CREATE INDEX orders_org_idx ON orders (organization_id, created_at DESC);
    CREATE INDEX orders_open_idx ON orders (market_id, rest_sequence) WHERE status IN ('OPEN', 'PARTIALLY_FILLED');
    CREATE INDEX orders_org_wallet_idx ON orders (organization_id, wallet_id);

    CREATE TABLE trades (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      market_id uuid NOT NULL REFERENCES markets(id),
      sequence bigint NOT NULL,
      maker_order_id uuid NOT NULL REFERENCES orders(id),
      taker_order_id uuid NOT NULL REFERENCES orders(id),
      maker_wallet_id uuid NOT NULL,
      taker_wallet_id uuid NOT NULL,
      taker_side text NOT NULL CHECK (taker_side IN ('BUY', 'SELL')),
      price numeric NOT NULL,
      quantity numeric NOT NULL,
      -- Decimal amounts of the quote asset.
      quote_amount numeric NOT NULL,
      maker_fee numeric NOT NULL,
      taker_fee numeric NOT NULL,
      settlement_batch_id uuid,
      settlement_status text NOT NULL DEFAULT 'QUEUED'
        CHECK (settlement_status IN ('QUEUED', 'BATCHED', 'SUBMITTED', 'CONFIRMED', 'FAILED', 'REORGED', 'REPLACED')),
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (market_id, sequence)
    );
    CREATE INDEX trades_market_time_idx ON trades (market_id, created_at, sequence);
    CREATE INDEX trades_maker_order_idx ON trades (maker_order_id);
    CREATE INDEX trades_taker_order_idx ON trades (taker_order_id);
    CREATE INDEX trades_maker_wallet_idx ON trades (maker_wallet_id, created_at DESC);
    CREATE INDEX trades_taker_wallet_idx ON trades (taker_wallet_id, created_at DESC);
    CREATE INDEX trades_settlement_idx ON trades (settlement_status) WHERE settlement_status = 'QUEUED';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS trades, orders, ledger_entries, ledger_balances, markets');
}
