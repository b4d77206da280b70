import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE organizations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      tier text NOT NULL CHECK (tier IN ('Starter', 'Pro', 'Business')),
      pro_access boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      name text NOT NULL,
      host text NOT NULL CHECK (host IN ('core', 'pro')),
      environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
      scopes text[] NOT NULL,
      tier text NOT NULL CHECK (tier IN ('Starter', 'Pro', 'Business')),
      prefix text NOT NULL,
      last_rotated_at timestamptz,
      revoked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX api_keys_org_idx ON api_keys (organization_id, created_at);

    -- A key has one current secret and, after a rotation, old secrets that expire.
    CREATE TABLE api_key_secrets (
      secret_hash bytea PRIMARY KEY,
      api_key_id uuid NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz
    );
    CREATE INDEX api_key_secrets_key_idx ON api_key_secrets (api_key_id);

    CREATE TABLE idempotency_keys (
      api_key_id uuid NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
      key text NOT NULL,
      fingerprint text NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      locked_at timestamptz,
      response_status integer,
      response_body text,
      response_content_type text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (api_key_id, key)
    );
    CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);

    CREATE TABLE outbox_events (
      sequence bigserial PRIMARY KEY,
      id uuid NOT NULL UNIQUE,
      organization_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
      type text NOT NULL,
      envelope jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      dispatched_at timestamptz
    );
    CREATE INDEX outbox_events_pending_idx ON outbox_events (sequence) WHERE dispatched_at IS NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE outbox_events, idempotency_keys, api_key_secrets, api_keys, organizations`);
}
