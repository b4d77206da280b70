import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A deposit to a checkout address is recorded with its own asset and chain: one of another
    -- asset or chain than the checkout asks for is shown in its own units and never counted.
    ALTER TABLE checkout_transfers
      ADD COLUMN asset_id uuid REFERENCES assets(id),
      ADD COLUMN blockchain_id uuid REFERENCES blockchains(id);
    UPDATE checkout_transfers t SET asset_id = ct.asset_id, blockchain_id = ct.blockchain_id
      FROM chain_transfers ct WHERE ct.id = t.chain_transfer_id;
    ALTER TABLE checkout_transfers ALTER COLUMN asset_id SET NOT NULL, ALTER COLUMN blockchain_id SET NOT NULL;

    -- WRONG_ASSET / WRONG_CHAIN: another asset, or the address on another chain. AML_FLAGGED: the
    -- sender is on a sanctions list. OVER_LIMIT: the link had no payment left for it.
    ALTER TABLE checkout_transfers DROP CONSTRAINT IF EXISTS checkout_transfers_kind_check;
    ALTER TABLE checkout_transfers ADD CONSTRAINT checkout_transfers_kind_check
      CHECK (kind IN ('PAYMENT', 'LATE', 'REPEAT', 'WRONG_ASSET', 'WRONG_CHAIN', 'AML_FLAGGED', 'OVER_LIMIT'));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DELETE FROM checkout_transfers WHERE kind NOT IN ('PAYMENT', 'LATE', 'REPEAT');
    ALTER TABLE checkout_transfers DROP CONSTRAINT IF EXISTS checkout_transfers_kind_check;
    ALTER TABLE checkout_transfers ADD CONSTRAINT checkout_transfers_kind_check CHECK (kind IN ('PAYMENT', 'LATE', 'REPEAT'));
    ALTER TABLE checkout_transfers DROP COLUMN IF EXISTS asset_id, DROP COLUMN IF EXISTS blockchain_id;
  `);
}
