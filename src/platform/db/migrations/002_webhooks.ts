import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE webhook_subscriptions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      developer_id text,
      name text NOT NULL,
      description text,
      url text NOT NULL,
      event_types text[] NOT NULL,
      is_active boolean NOT NULL DEFAULT true,
      failing_since timestamptz,
      deactivated_at timestamptz,
      deactivation_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_subscriptions_org_idx ON webhook_subscriptions (organization_id, created_at DESC);

    -- Signing secrets: the newest has expires_at NULL; a rotated-out one signs until it expires.
    CREATE TABLE webhook_secrets (
      id bigserial PRIMARY KEY,
      subscription_id uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
      secret text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz
    );
    CREATE INDEX webhook_secrets_subscription_idx ON webhook_secrets (subscription_id);

    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      subscription_id uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
      event_id uuid NOT NULL,
      event_sequence bigint NOT NULL,
      type text NOT NULL,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SUCCESS', 'FAILED')),
      attempts integer NOT NULL DEFAULT 0,
      response_status_code integer,
      error_message text,
      next_attempt_at timestamptz,
      lease_until timestamptz,
      last_attempt_at timestamptz,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (subscription_id, event_id)
    );
    CREATE INDEX webhook_deliveries_org_idx ON webhook_deliveries (organization_id, created_at DESC);
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;

    -- One row per attempt: what was sent when, and what came back.
    CREATE TABLE webhook_delivery_attempts (
      id bigserial PRIMARY KEY,
      delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      started_at timestamptz NOT NULL,
      duration_ms integer NOT NULL,
      response_status_code integer,
      error_message text,
      UNIQUE (delivery_id, attempt)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE webhook_delivery_attempts, webhook_deliveries, webhook_secrets, webhook_subscriptions`);
}
