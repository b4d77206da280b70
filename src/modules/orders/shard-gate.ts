import { StatementCheckFailed, StatementPart } from '../../platform/db/one-statement';

/** The shard a market's commits are fenced under, and the token this node holds it with. */
export interface ShardFence {
  shard: number;
  token: string;
}

/**
 * Who may run a market's commands on this node. The cluster's answer is ShardLeadership (leases in
 * Redis, tokens in PostgreSQL); a lone OrderService built without one (tools, tests) is SOLE_NODE.
 */
export interface ShardGate {
  /** Throws 409 NOT_LEADER unless this node leads the market's shard and its books are rebuilt. */
  assertAccepting(symbol: string): void;
  /** The fence for the market's commits while this node holds its shard (books ready or being rebuilt); else throws NOT_LEADER. Undefined: unfenced. */
  fence(symbol: string): ShardFence | undefined;
  /** For work that is not a leader's (a chain reset at start): the shard's token as PostgreSQL holds it now. */
  currentFence(symbol: string): Promise<ShardFence | undefined>;
  /** A commit under `fence` was refused by PostgreSQL: another node took the shard. */
  fencedOut(fence: ShardFence): void;
}

/** Every market is this process's, unfenced: one OrderService alone on its database (the market sequence still fences it). */
export const SOLE_NODE: ShardGate = {
  assertAccepting: () => undefined,
  fence: () => undefined,
  currentFence: async () => undefined,
  fencedOut: () => undefined,
};

const FENCE_PART = 'shard_fence';

/**
 * The commit's guard: the shard's row must still carry the token the commit was accepted under.
 * FOR SHARE makes a concurrent take (an UPDATE of that row) wait for this statement, or this
 * statement re-read the row after the take and find the token changed: then nothing is written.
 */
export function shardFencePart(fence: ShardFence): StatementPart {
  return { name: FENCE_PART, sql: 'SELECT shard FROM orderbook_shards WHERE shard = ? AND fencing_token = ? FOR SHARE', bindings: [fence.shard, fence.token], expectRows: 1 };
}

export function isFencedOut(e: unknown): boolean {
  // The part's name is the database's message, which knex prefixes with the statement's text.
  return e instanceof StatementCheckFailed && (e.part === FENCE_PART || e.part.endsWith(` - ${FENCE_PART}`));
}

export function sameFence(a: ShardFence | undefined, b: ShardFence | undefined): boolean {
  return a?.shard === b?.shard && a?.token === b?.token;
}
