import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The chain registry, synchronised from configuration on every start. rpc_url stays internal.
    CREATE TABLE blockchains (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      chain_id bigint NOT NULL UNIQUE,
      name text NOT NULL,
      slug text NOT NULL UNIQUE,
      symbol text NOT NULL,
      network text NOT NULL,
      token_standard text NOT NULL,
      logo_url text NOT NULL DEFAULT '',
      is_active boolean NOT NULL DEFAULT true,
      is_evm_compatible boolean NOT NULL DEFAULT true,
      is_dev boolean NOT NULL DEFAULT false,
      rpc_url text NOT NULL,
      confirmations integer NOT NULL CHECK (confirmations >= 1),
      configurations jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE assets (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      name text NOT NULL,
      symbol text NOT NULL,
      decimals integer NOT NULL CHECK (decimals BETWEEN 0 AND 36),
      address text NOT NULL,
      standard text NOT NULL,
      logo_url text NOT NULL DEFAULT '',
      is_active boolean NOT NULL DEFAULT true,
      is_native boolean NOT NULL DEFAULT false,
      network text NOT NULL,
      configurations jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (blockchain_id, address)
    );

    CREATE TABLE master_wallets (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      name text NOT NULL,
      description text,
      wallet_address text NOT NULL,
      -- The BIP-39 mnemonic sealed with AES-256-GCM (SecretBox), bound to the wallet id.
      sealed_mnemonic text NOT NULL,
      -- The extended public key of m/44'/60'/0'/0: deposit addresses derive from it without the secret.
      account_xpub text NOT NULL,
      next_address_index integer NOT NULL DEFAULT 1,
      configurations jsonb NOT NULL DEFAULT '{}',
      metadata jsonb NOT NULL DEFAULT '{}',
      is_active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX master_wallets_org_idx ON master_wallets (organization_id, created_at DESC);
    CREATE UNIQUE INDEX master_wallets_address_idx ON master_wallets (wallet_address);

    -- The chains a master wallet (and its addresses) lives on, and whether Keel watches it there.
    CREATE TABLE master_wallet_chains (
      master_wallet_id uuid NOT NULL REFERENCES master_wallets(id) ON DELETE CASCADE,
      blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      monitoring_enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (master_wallet_id, blockchain_id)
    );

    CREATE TABLE addresses (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      master_wallet_id uuid NOT NULL REFERENCES master_wallets(id) ON DELETE CASCADE,
      derivation_index integer NOT NULL,
      address text NOT NULL UNIQUE,
      name text,
      metadata jsonb NOT NULL DEFAULT '{}',
      is_active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (master_wallet_id, derivation_index)
    );
    CREATE INDEX addresses_wallet_idx ON addresses (master_wallet_id, created_at DESC);

    -- The deposit watcher's place on each chain, and the recent block hashes it checks for reorgs.
    CREATE TABLE chain_cursors (
      blockchain_id uuid PRIMARY KEY REFERENCES blockchains(id),
      block_number bigint NOT NULL,
      block_hash text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE chain_blocks (
      blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      block_number bigint NOT NULL,
      block_hash text NOT NULL,
      PRIMARY KEY (blockchain_id, block_number)
    );

    -- Value that moved on chain to or from a wallet Keel holds. log_index -1: a native transfer.
    CREATE TABLE chain_transfers (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      blockchain_id uuid NOT NULL REFERENCES blockchains(id),
      master_wallet_id uuid NOT NULL REFERENCES master_wallets(id) ON DELETE CASCADE,
      address_id uuid REFERENCES addresses(id) ON DELETE CASCADE,
      asset_id uuid NOT NULL REFERENCES assets(id),
      direction text NOT NULL CHECK (direction IN ('incoming', 'outgoing')),
      category text NOT NULL,
      tx_hash text NOT NULL,
      log_index integer NOT NULL,
      block_number bigint NOT NULL,
      block_hash text NOT NULL,
      block_timestamp timestamptz NOT NULL,
      from_address text NOT NULL,
      to_address text NOT NULL,
      raw_value numeric(78, 0) NOT NULL,
      status text NOT NULL DEFAULT 'CONFIRMED' CHECK (status IN ('CONFIRMED', 'REVERTED')),
      reverted_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (blockchain_id, tx_hash, log_index)
    );
    CREATE INDEX chain_transfers_wallet_idx ON chain_transfers (master_wallet_id, block_number, id);
    CREATE INDEX chain_transfers_address_idx ON chain_transfers (address_id, block_number, id) WHERE address_id IS NOT NULL;
    CREATE INDEX chain_transfers_block_idx ON chain_transfers (blockchain_id, block_number);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE chain_transfers, chain_blocks, chain_cursors, addresses, master_wallet_chains, master_wallets, assets, blockchains;
  `);
}
