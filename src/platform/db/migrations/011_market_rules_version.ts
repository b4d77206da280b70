import { Knex } from 'knex';

/**
 * markets.rules_version: a counter the database moves whenever a market's trading rules (status,
 * fees, minimum notional) change, by whatever path the row is updated. Every node's group commit
 * requires the version its engine was built on (MarketService.sequencePart), so a node with stale
 * rules has its statement refused instead of trading under a halt or an old fee.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE markets ADD COLUMN rules_version bigint NOT NULL DEFAULT 0;

    CREATE FUNCTION keel_markets_rules_version() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        IF (NEW.status, NEW.maker_fee, NEW.taker_fee, NEW.min_notional, NEW.tick_size, NEW.lot_size)
           IS DISTINCT FROM (OLD.status, OLD.maker_fee, OLD.taker_fee, OLD.min_notional, OLD.tick_size, OLD.lot_size) THEN
          NEW.rules_version := OLD.rules_version + 1;
        ELSE
          NEW.rules_version := OLD.rules_version;
        END IF;
        RETURN NEW;
      END
      $$;

    CREATE TRIGGER markets_rules_version BEFORE UPDATE ON markets
      FOR EACH ROW EXECUTE FUNCTION keel_markets_rules_version();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS markets_rules_version ON markets;
    DROP FUNCTION IF EXISTS keel_markets_rules_version();
    ALTER TABLE markets DROP COLUMN IF EXISTS rules_version;
  `);
}
