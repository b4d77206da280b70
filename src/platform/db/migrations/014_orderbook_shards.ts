import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Order-book shard leadership as PostgreSQL knows it: a node that takes a shard's lease in Redis
    -- raises fencing_token here, and every commit of the shard's markets (orders, trades, ledger,
    -- cancels) requires, in its own statement, that the token it was accepted under is still the one
    -- here. A stale leader's commit therefore changes nothing.
    CREATE TABLE orderbook_shards (
      shard integer PRIMARY KEY CHECK (shard >= 0),
      fencing_token bigint NOT NULL CHECK (fencing_token > 0),
      leader_node_id text NOT NULL,
      taken_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE orderbook_shards');
}
