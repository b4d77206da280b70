import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { FencedLeases } from '../../platform/fenced-leases';
import type { Logger } from '../../platform/logger';
import type { ShardFence, ShardGate } from './shard-gate';
import type { ShardMap } from './shard-map';
import { Hook } from '../../platform/events/hooks';

export interface LeadershipOptions {
  nodeId: string;
  /** The shards this node competes for. */
  eligible: number[];
  /** Shards taken as soon as they are free; the other eligible ones only once seen free on two rounds running, or 250 ms after another holder's lease expired, so the node preferring them takes them first. Undefined: all. */
  preferred?: ReadonlySet<number>;
  ttlMs: number;
  renewMs: number;
  /** Orders stop this long before the lease could expire. */
  marginMs: number;
}

/** What this node does when it gains a shard (rebuild its books; orders wait until it is done) or loses one (drop them). */
export interface ShardListener {
  gained(shard: number): Promise<void>;
  lost(shard: number): Promise<void>;
}

/** A shard this node holds. */
export interface HeldShard {
  shard: number;
  fencingToken: string;
  /** When the lease in Redis expires unless renewed (from the last successful renewal). */
  leaseExpiresAt: Date;
  /** Orders are refused from this moment unless the lease is renewed first. */
  acceptingUntil: Date;
  /** REBUILDING while the shard's books load from PostgreSQL (orders answer NOT_LEADER), then LEADING. */
  state: 'REBUILDING' | 'LEADING';
}

/** One shard as Redis says now. */
export interface ShardLeader {
  shard: number;
  leader: string | null;
  fencingToken: string | null;
  leaseExpiresInMs: number | null;
}

interface Holding {
  token: string;
  /** performance.now() deadline for taking orders: last renewal sent + TTL - margin. */
  validUntil: number;
  /** Wall clock of the lease's expiry in Redis. */
  expiresAt: number;
  ready: boolean;
}

const leaseName = (shard: number) => `orderbook:shard:${shard}`;

/**
 * Shard leadership of this order-book node. Every `renewMs` it checks that PostgreSQL still holds
 * the tokens of its shards and renews their leases in Redis (compare-and-set), then competes for
 * the free shards it is eligible for. Taking a shard: a new token from Redis (INCR), recorded in
 * `orderbook_shards` (raised, never lowered), then the shard's books are rebuilt from PostgreSQL
 * and only then are its orders taken. A shard whose lease is not renewed in time (Redis or
 * PostgreSQL unreachable, the process stalled) stops taking orders `marginMs` before the lease can
 * expire, and is dropped; a commit refused by the token in PostgreSQL drops it at once.
 */
export class ShardLeadership implements ShardGate {
  private readonly held = new Map<number, Holding>();
  /** Other nodes' holdings as last seen (for NOT_LEADER's details.leader). */
  private readonly leaders = new Map<number, string | null>();
  private readonly warming = new Set<Promise<void>>();
  /** Shards not preferred here that were free at the last round. */
  private readonly seenFree = new Set<number>();
  /** Shards being competed for now (a round and an expiry timer must not both take one). */
  private readonly competing = new Set<number>();
  /** One-shot attempts at the moment another node's lease would expire, so a dead leader is replaced without waiting for the next round. */
  private readonly expiryTimers = new Map<number, NodeJS.Timeout>();
  /** Awaited: a failed rebuild gives the shard back. */
  private readonly gained = new Hook<[number]>();
  /** Not awaited, its failure only logged: the shard is already gone. */
  private readonly lost = new Hook<[number]>((e) => this.logger.warn({ err: e }, 'shard lost: dropping its books failed'));
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = true;

  constructor(
    private readonly db: Knex,
    private readonly leases: FencedLeases,
    readonly shards: ShardMap,
    readonly options: LeadershipOptions,
    private readonly logger: Logger,
  ) {}

  get nodeId(): string {
    return this.options.nodeId;
  }

  onShards(listener: ShardListener): void {
    this.gained.add((shard) => listener.gained(shard));
    this.lost.add((shard) => listener.lost(shard));
  }

  /** Competes once and waits for the shards taken to be rebuilt (so a lone node leads everything when it starts serving), then keeps at it. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.tick();
    await Promise.all([...this.warming]);
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const timer of this.expiryTimers.values()) clearTimeout(timer);
    this.expiryTimers.clear();
    await this.running;
    const held = [...this.held.entries()];
    this.held.clear();
    await Promise.allSettled(held.map(([shard, h]) => this.leases.release(leaseName(shard), this.nodeId, h.token)));
  }

  // ShardGate

  assertAccepting(symbol: string): void {
    const shard = this.shards.shardOf(symbol);
    const h = this.valid(shard);
    if (h?.ready) return;
    throw this.notLeader(symbol, shard, h ? this.nodeId : null);
  }

  fence(symbol: string): ShardFence {
    const shard = this.shards.shardOf(symbol);
    const h = this.valid(shard);
    if (!h) throw this.notLeader(symbol, shard, null);
    return { shard, token: h.token };
  }

  async currentFence(symbol: string): Promise<ShardFence | undefined> {
    const shard = this.shards.shardOf(symbol);
    const row = await this.db('orderbook_shards').where({ shard }).first('fencingToken');
    return row ? { shard, token: String(row.fencingToken) } : undefined;
  }

  fencedOut(fence: ShardFence): void {
    this.logger.warn({ shard: fence.shard, fencingToken: fence.token, nodeId: this.nodeId }, 'a commit was refused by the shard fencing token in PostgreSQL: another node has taken the shard; nothing was written');
    if (this.held.get(fence.shard)?.token === fence.token) this.lose(fence.shard, 'a commit was refused: PostgreSQL holds a newer fencing token for the shard');
  }

  // Views

  heldShards(): HeldShard[] {
    const now = performance.now();
    return [...this.held.entries()]
      .sort(([a], [b]) => a - b)
      .map(([shard, h]) => ({
        shard,
        fencingToken: h.token,
        leaseExpiresAt: new Date(h.expiresAt),
        acceptingUntil: new Date(Date.now() + (h.validUntil - now)),
        state: h.ready ? 'LEADING' : 'REBUILDING',
      }));
  }

  /** Every shard's leader as Redis holds it now. */
  async clusterView(): Promise<ShardLeader[]> {
    const all = this.shards.all();
    const holders = await this.leases.holders(all.map(leaseName));
    return all.map((shard, i) => ({ shard, leader: holders[i]?.nodeId ?? null, fencingToken: holders[i]?.token ?? null, leaseExpiresInMs: holders[i]?.ttlMs ?? null }));
  }

  // The loop

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => this.schedule());
    }, this.options.renewMs);
  }

  private async tick(): Promise<void> {
    const now = performance.now();
    for (const [shard, h] of this.held) if (now >= h.validUntil) this.lose(shard, 'the lease was not renewed in time');
    await this.renewHeld();
    if (!this.stopped) await this.competeForFree();
  }

  private async renewHeld(): Promise<void> {
    const held = [...this.held.entries()];
    if (held.length === 0) return;
    let tokens: Map<number, string>;
    try {
      const rows: { shard: number; fencingToken: string }[] = await this.db('orderbook_shards').whereIn('shard', held.map(([s]) => s)).select('shard', 'fencingToken');
      tokens = new Map(rows.map((r) => [r.shard, String(r.fencingToken)]));
    } catch (e) {
      // PostgreSQL unreachable: the leases are not renewed, so they lapse and another node may take them.
      this.logger.warn({ err: e }, 'shard leases not renewed: PostgreSQL did not answer');
      return;
    }
    const sent = performance.now();
    const sentAt = Date.now();
    const { ttlMs, marginMs } = this.options;
    await Promise.all(
      held.map(async ([shard, h]) => {
        if (tokens.get(shard) !== h.token) return this.lose(shard, 'PostgreSQL holds a newer fencing token for the shard');
        try {
          const renewed = await this.leases.renew(leaseName(shard), this.nodeId, h.token, ttlMs);
          if (this.held.get(shard) !== h) return;
          if (!renewed) return this.lose(shard, 'the lease in Redis is no longer this node’s');
          h.validUntil = sent + ttlMs - marginMs;
          h.expiresAt = sentAt + ttlMs;
        } catch (e) {
          this.logger.warn({ shard, err: e }, 'shard lease not renewed: Redis did not answer');
        }
      }),
    );
  }

  private async competeForFree(): Promise<void> {
    const { eligible, preferred } = this.options;
    const free = eligible.filter((s) => !this.held.has(s));
    const now = free.filter((s) => !preferred || preferred.has(s) || this.seenFree.has(s));
    const later = free.filter((s) => !now.includes(s));
    // Shards this node does not compete for: only their leaders are noted (for NOT_LEADER's details.leader).
    const watched = this.shards.all().filter((s) => !eligible.includes(s));
    if (later.length || watched.length) {
      try {
        const holders = await this.leases.holders([...later, ...watched].map(leaseName));
        watched.forEach((shard, i) => this.leaders.set(shard, holders[later.length + i]?.nodeId ?? null));
        later.forEach((shard, i) => {
          const holder = holders[i];
          if (holder) {
            this.leaders.set(shard, holder.nodeId);
            this.armExpiry(shard, holder.ttlMs);
          } else this.seenFree.add(shard);
        });
      } catch (e) {
        this.logger.warn({ err: e }, 'shard leases not read: Redis did not answer');
      }
    }
    await Promise.all(now.map((shard) => this.compete(shard)));
  }

  private async compete(shard: number): Promise<void> {
    if (this.competing.has(shard) || this.held.has(shard)) return;
    this.competing.add(shard);
    try {
      await this.take(shard);
    } finally {
      this.competing.delete(shard);
    }
  }

  /**
   * Tries again when the holder's lease would expire unless renewed, a few milliseconds after; for
   * a shard another node prefers, up to 250 ms later still, so that node (if alive) takes it first.
   */
  private armExpiry(shard: number, ttlMs: number): void {
    const { preferred, renewMs } = this.options;
    if (this.stopped || this.expiryTimers.has(shard)) return;
    const grace = preferred && !preferred.has(shard) ? Math.min(renewMs, 250) : 0;
    const timer = setTimeout(() => {
      this.expiryTimers.delete(shard);
      if (!this.stopped) void this.compete(shard);
    }, ttlMs + 5 + grace);
    timer.unref();
    this.expiryTimers.set(shard, timer);
  }

  private async take(shard: number): Promise<void> {
    const { ttlMs, marginMs } = this.options;
    const name = leaseName(shard);
    this.seenFree.delete(shard);
    const sent = performance.now();
    const sentAt = Date.now();
    let token: string;
    try {
      const outcome = await this.leases.take(name, this.nodeId, ttlMs);
      if (!outcome.taken) {
        this.leaders.set(shard, outcome.holder?.nodeId ?? null);
        if (outcome.holder) this.armExpiry(shard, outcome.holder.ttlMs);
        return;
      }
      token = outcome.token;
    } catch (e) {
      this.logger.warn({ shard, err: e }, 'shard lease not competed for: Redis did not answer');
      return;
    }
    try {
      if (!(await this.record(shard, token))) {
        // Redis handed out a token PostgreSQL has already seen (Redis lost its counter): raise the counter, let go, try again next round.
        const row = await this.db('orderbook_shards').where({ shard }).first('fencingToken');
        await this.leases.raiseCounter(name, String(row.fencingToken));
        await this.leases.release(name, this.nodeId, token);
        this.logger.warn({ shard, redisToken: token, postgresToken: String(row.fencingToken) }, 'shard lease given back: its token was behind PostgreSQL’s; the counter is raised');
        return;
      }
    } catch (e) {
      this.logger.warn({ shard, err: e }, 'shard lease given back: its fencing token could not be recorded in PostgreSQL');
      await this.leases.release(name, this.nodeId, token).catch(() => undefined);
      return;
    }
    if (this.stopped) {
      await this.leases.release(name, this.nodeId, token).catch(() => undefined);
      return;
    }
    const h: Holding = { token, validUntil: sent + ttlMs - marginMs, expiresAt: sentAt + ttlMs, ready: false };
    this.held.set(shard, h);
    this.leaders.set(shard, this.nodeId);
    const warm = this.warm(shard, h);
    this.warming.add(warm);
    void warm.finally(() => this.warming.delete(warm));
  }

  /** Raises the shard's token in PostgreSQL to `token`; false when PostgreSQL already holds this token or a newer one. */
  private async record(shard: number, token: string): Promise<boolean> {
    const { rows } = await this.db.raw(
      `INSERT INTO orderbook_shards (shard, fencing_token, leader_node_id, taken_at) VALUES (?, ?, ?, now())
       ON CONFLICT (shard) DO UPDATE SET fencing_token = EXCLUDED.fencing_token, leader_node_id = EXCLUDED.leader_node_id, taken_at = EXCLUDED.taken_at
        WHERE orderbook_shards.fencing_token < EXCLUDED.fencing_token
       RETURNING shard`,
      [shard, token, this.nodeId],
    );
    return rows.length === 1;
  }

  private async warm(shard: number, h: Holding): Promise<void> {
    try {
      await this.gained.run(shard);
      if (this.held.get(shard) !== h) return;
      h.ready = true;
      this.logger.info({ shard, fencingToken: h.token, nodeId: this.nodeId }, 'shard taken: books rebuilt, taking its orders');
    } catch (e) {
      if (this.held.get(shard) !== h) return;
      this.logger.error({ shard, err: e }, 'shard given back: its books could not be rebuilt');
      this.lose(shard, 'rebuild failed');
    }
  }

  private lose(shard: number, reason: string): void {
    const h = this.held.get(shard);
    if (!h) return;
    this.held.delete(shard);
    this.leaders.set(shard, null);
    this.logger.warn({ shard, fencingToken: h.token, nodeId: this.nodeId, reason }, 'shard lost: its books are dropped and its orders refused');
    this.lost.notify(shard);
    void this.leases.release(leaseName(shard), this.nodeId, h.token).catch(() => undefined);
  }

  /** The holding if it may still act (its deadline not passed). */
  private valid(shard: number): Holding | undefined {
    const h = this.held.get(shard);
    return h && performance.now() < h.validUntil ? h : undefined;
  }

  private notLeader(symbol: string, shard: number, rebuildingHere: string | null): KeelError {
    const leader = rebuildingHere ?? (this.held.has(shard) ? null : (this.leaders.get(shard) ?? null));
    const retryAfter = rebuildingHere ? 1 : Math.max(1, Math.ceil(this.options.ttlMs / 1000));
    return KeelError.notLeader(symbol, shard, leader, retryAfter);
  }
}
