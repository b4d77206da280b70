import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Two chain families (issue 35). An EVM chain is known by its chain id (UNIQUE, as before); a
    -- Solana cluster has no chain id and is known by its network (devnet or mainnet): one a network.
    ALTER TABLE blockchains ADD COLUMN family text NOT NULL DEFAULT 'evm' CHECK (family IN ('evm', 'solana'));
    ALTER TABLE blockchains ALTER COLUMN chain_id DROP NOT NULL;
    ALTER TABLE blockchains ADD CONSTRAINT blockchains_family_key CHECK ((family = 'evm') = (chain_id IS NOT NULL) AND is_evm_compatible = (family = 'evm'));
    CREATE UNIQUE INDEX blockchains_solana_network_idx ON blockchains (network) WHERE family = 'solana';
    -- A Solana master wallet has no extended public key (ed25519 derivation is hardened only).
    ALTER TABLE master_wallets ALTER COLUMN account_xpub DROP NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE master_wallets ALTER COLUMN account_xpub SET NOT NULL;
    DELETE FROM blockchains WHERE family <> 'evm';
    DROP INDEX blockchains_solana_network_idx;
    ALTER TABLE blockchains DROP CONSTRAINT blockchains_family_key;
    ALTER TABLE blockchains ALTER COLUMN chain_id SET NOT NULL;
    ALTER TABLE blockchains DROP COLUMN family;
  `);
}
