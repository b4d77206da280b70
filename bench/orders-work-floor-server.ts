import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Pool } from 'pg';
import { connectRedis } from '../src/platform/redis';
import { RateLimiter } from '../src/platform/rate-limit';
import { serveJson } from './support';
import { groupCommitted } from './group-commit';

/**
 * The orders benchmark's work floor: the least code that does the durable work Keel's group commit
 * does for an order, on Keel's own tables and indexes (Keel's benchmark database, a market of its
 * own): node:http, the Redis rate limit, the body parsed, then group-committed (the orders that
 * arrive while a commit runs go into the next) as one hand-written statement: each order's row in
 * its final state, the makers it filled updated, a trade per fill, the journal summed per (wallet,
 * asset, kind) for the group, the balances once per (wallet, asset) and the market's two sequences;
 * and, as Keel's settlement does, each trade rewritten into a batch, then submitted, then confirmed
 * (a step a second). Matching is the least that makes trades from the same flow: an order fills the oldest
 * resting order at the other side's best price when it crosses, whole (every order is 0.01). No checks,
 * authentication, idempotency, fencing or engine. Its rate over the yardstick's is the ceiling for
 * this durable work on this machine, whatever the code around it.
 */
interface Resting {
  id: string;
  walletId: string;
  priceTicks: bigint;
  lock: bigint;
}

/** One side of a book: a FIFO queue per price in ticks, the best price found by scanning from the last best. */
class Side {
  private readonly levels = new Map<number, Resting[]>();
  private best: number | null = null;
  constructor(private readonly better: (a: number, b: number) => boolean) {}

  rest(o: Resting): void {
    const p = Number(o.priceTicks);
    const level = this.levels.get(p) ?? this.levels.set(p, []).get(p)!;
    level.push(o);
    if (this.best === null || this.better(p, this.best)) this.best = p;
  }

  /** Takes the oldest order at the best price when it is at `limit` or better. */
  take(limit: number): Resting | undefined {
    if (this.best === null || this.better(limit, this.best)) return undefined;
    const level = this.levels.get(this.best)!;
    const o = level.shift()!;
    if (level.length === 0) {
      this.levels.delete(this.best);
      this.best = null;
      for (const p of this.levels.keys()) if (this.best === null || this.better(p, this.best)) this.best = p;
    }
    return o;
  }
}

/** What the work floor reads of an order's body (the rest is Keel's flow's fixed 0.01 ETH GTC limit order). */
export interface WorkFloorOrder {
  side: string;
  price?: string | null;
}

/** An order as the work floor committed it. */
export interface WorkFloorPlaced {
  id: string;
  sequence: string;
}

const LOT_UNITS = 10n ** 13n; // 0.001 ETH in wei
const NOTIONAL_UNIT = 10n; // a tick (0.01 USDC) times a lot, in USDC base units: 0.01 × 0.001 × 10^6
const LOTS = 10n; // 0.01 ETH
const FEE_PER_MILLE = { maker: 1n, taker: 2n };

/**
 * The work floor's durable work on a market of Keel's database (`symbol`, created beforehand) for
 * two wallets of its own: resolves with a function that group-commits an order and answers once it
 * is committed. `without` names parts to leave out, to see what each costs (makers, trades,
 * journal, balances, settlement).
 */
export async function workFloorStore(pool: Pool, orgId: string, symbol: string, without: ReadonlySet<string> = new Set()): Promise<(order: WorkFloorOrder) => Promise<WorkFloorPlaced>> {
  const part = <T>(name: string, rows: T[]): string => text(without.has(name) ? [] : rows);
  const { rows: m } = await pool.query('SELECT id, base_asset_id AS base, quote_asset_id AS quote, sequence FROM markets WHERE symbol = $1', [symbol]);
  const market = m[0] as { id: string; base: string; quote: string; sequence: string };
  const buyer = randomUUID();
  const seller = randomUUID();
  // The two wallets' trading balances, deep enough for any run.
  await pool.query(
    `INSERT INTO ledger_balances (wallet_id, asset_id, account, organization_id, available) VALUES ($1, $3, 'trading', $5, 1e40), ($1, $4, 'trading', $5, 1e40), ($2, $3, 'trading', $5, 1e40), ($2, $4, 'trading', $5, 1e40)`,
    [buyer, seller, market.base, market.quote, orgId],
  );
  let sequence = BigInt(market.sequence);
  const queued: string[] = [];
  const book = { BUY: new Side((a, b) => a > b), SELL: new Side((a, b) => a < b) };

  const commitGroup = async (bodies: WorkFloorOrder[]): Promise<WorkFloorPlaced[]> => {
    const now = new Date().toISOString();
    const created: Record<string, unknown>[] = [];
    const updated: Record<string, unknown>[] = [];
    const trades: Record<string, unknown>[] = [];
    const journal = new Map<string, { walletId: string | null; assetId: string; kind: string; available: bigint; locked: bigint }>();
    const move = (walletId: string | null, assetId: string, kind: string, available: bigint, locked: bigint) => {
      const key = `${walletId}|${assetId}|${kind}`;
      const j = journal.get(key) ?? journal.set(key, { walletId, assetId, kind, available: 0n, locked: 0n }).get(key)!;
      j.available += available;
      j.locked += locked;
    };
    const from = sequence;
    for (const body of bodies) {
      const side = body.side as 'BUY' | 'SELL';
      const other = side === 'BUY' ? 'SELL' : 'BUY';
      const walletId = side === 'BUY' ? buyer : seller;
      const priceTicks = BigInt(Math.round(Number(body.price) * 100));
      const lockAsset = side === 'BUY' ? market.quote : market.base;
      const cost = priceTicks * LOTS * NOTIONAL_UNIT;
      const lock = side === 'BUY' ? cost + (cost * FEE_PER_MILLE.taker) / 1000n : LOTS * LOT_UNITS;
      move(walletId, lockAsset, 'lock', -lock, lock);
      const id = randomUUID();
      const seq = ++sequence;
      const head = book[other].take(Number(priceTicks));
      let status = 'OPEN';
      let restSequence: string | null = String(seq);
      if (head) {
        const tradeCost = head.priceTicks * LOTS * NOTIONAL_UNIT;
        const makerFee = (tradeCost * FEE_PER_MILLE.maker) / 1000n;
        const takerFee = (tradeCost * FEE_PER_MILLE.taker) / 1000n;
        const [buyerFee, sellerFee] = side === 'BUY' ? [takerFee, makerFee] : [makerFee, takerFee];
        const base = LOTS * LOT_UNITS;
        move(buyer, market.quote, 'fill', 0n, -(tradeCost + buyerFee));
        move(buyer, market.base, 'fill', base, 0n);
        move(seller, market.base, 'fill', 0n, -base);
        move(seller, market.quote, 'fill', tradeCost - sellerFee, 0n);
        move(null, market.quote, 'fee', buyerFee + sellerFee, 0n);
        // What each order locked beyond what the trade took goes back.
        const takerLeft = lock - (side === 'BUY' ? tradeCost + buyerFee : base);
        const makerLeft = head.lock - (side === 'BUY' ? base : tradeCost + buyerFee);
        if (takerLeft > 0n) move(walletId, lockAsset, 'unlock', takerLeft, -takerLeft);
        if (makerLeft > 0n) move(head.walletId, side === 'BUY' ? market.base : market.quote, 'unlock', makerLeft, -makerLeft);
        status = 'FILLED';
        restSequence = null;
        const price = (Number(head.priceTicks) / 100).toFixed(2);
        updated.push({ id: head.id, remaining_lots: 0, filled_lots: String(LOTS), filled_notional: String(head.priceTicks * LOTS), fees_paid: String(side === 'BUY' ? sellerFee : buyerFee), status: 'FILLED', locked_amount: '0', rest_sequence: null, updated_at: now });
        trades.push({ id: randomUUID(), market_id: market.id, sequence: String(seq), maker_order_id: head.id, taker_order_id: id, maker_wallet_id: head.walletId, taker_wallet_id: walletId, taker_side: side, price, quantity: '0.01', quote_amount: String(tradeCost), maker_fee: String(side === 'BUY' ? sellerFee : buyerFee), taker_fee: String(side === 'BUY' ? buyerFee : sellerFee), settlement_status: 'QUEUED', created_at: now });
      } else {
        book[side].rest({ id, walletId, priceTicks, lock });
      }
      created.push({
        id, organization_id: orgId, market_id: market.id, wallet_id: walletId, side, type: 'LIMIT', time_in_force: 'GTC', post_only: false, price: body.price, quantity: '0.01', price_ticks: String(priceTicks), quantity_lots: String(LOTS),
        remaining_lots: status === 'FILLED' ? 0 : String(LOTS), filled_lots: status === 'FILLED' ? String(LOTS) : 0, filled_notional: 0, fees_paid: 0, status, lock_asset_id: lockAsset, locked_amount: status === 'FILLED' ? '0' : String(lock),
        sequence: String(seq), rest_sequence: restSequence, created_at: now, updated_at: now,
      });
    }
    const entries = [...journal.values()].map((j) => ({ organization_id: j.walletId && orgId, wallet_id: j.walletId, asset_id: j.assetId, kind: j.kind, available_delta: String(j.available), locked_delta: String(j.locked), reference: `orders:${market.id}:${sequence}` }));
    const balances = new Map<string, { wallet_id: string; asset_id: string; available: bigint; locked: bigint }>();
    for (const j of journal.values()) {
      if (!j.walletId) continue;
      const b = balances.get(`${j.walletId}|${j.assetId}`) ?? balances.set(`${j.walletId}|${j.assetId}`, { wallet_id: j.walletId, asset_id: j.assetId, available: 0n, locked: 0n }).get(`${j.walletId}|${j.assetId}`)!;
      b.available += j.available;
      b.locked += j.locked;
    }
    // Unnamed (planned each time) and the makers' ids as an array: a kept plan made while the tables
    // were empty would read the whole orders table for the UPDATE's join, as Keel's migration 044 tells.
    await pool.query({
      text: `WITH o AS (INSERT INTO orders SELECT * FROM json_populate_recordset(NULL::orders, $1::json)),
              u AS (UPDATE orders SET remaining_lots = v.remaining_lots, filled_lots = v.filled_lots, filled_notional = v.filled_notional, fees_paid = v.fees_paid,
                                      status = v.status, locked_amount = v.locked_amount, rest_sequence = v.rest_sequence, updated_at = v.updated_at
                      FROM json_populate_recordset(NULL::orders, $2::json) v
                     WHERE orders.id = v.id AND orders.id = ANY(ARRAY(SELECT (e->>'id')::uuid FROM json_array_elements($2::json) e))),
              t AS (INSERT INTO trades (id, market_id, sequence, maker_order_id, taker_order_id, maker_wallet_id, taker_wallet_id, taker_side, price, quantity, quote_amount, maker_fee, taker_fee, settlement_status, created_at)
                    SELECT id, market_id, sequence, maker_order_id, taker_order_id, maker_wallet_id, taker_wallet_id, taker_side, price, quantity, quote_amount, maker_fee, taker_fee, settlement_status, created_at
                      FROM json_populate_recordset(NULL::trades, $3::json)),
              j AS (INSERT INTO ledger_entries (organization_id, wallet_id, asset_id, kind, available_delta, locked_delta, reference)
                    SELECT organization_id, wallet_id, asset_id, kind, available_delta, locked_delta, reference FROM json_populate_recordset(NULL::ledger_entries, $4::json)),
              b AS (UPDATE ledger_balances AS b SET available = b.available + v.available, locked = b.locked + v.locked, updated_at = now()
                      FROM json_to_recordset($5::json) AS v(wallet_id uuid, asset_id uuid, available numeric, locked numeric)
                     WHERE b.wallet_id = v.wallet_id AND b.asset_id = v.asset_id AND b.account = 'trading'),
              s AS (UPDATE markets SET sequence = $7 WHERE id = $6 AND sequence = $8)
              INSERT INTO market_book_sequences AS q (market_id, sequence) VALUES ($6, $7) ON CONFLICT (market_id) DO UPDATE SET sequence = excluded.sequence`,
      values: [text(created), part('makers', updated), part('trades', trades), part('journal', entries), part('balances', [...balances.values()]), market.id, String(sequence), String(from)],
    });
    for (const t of trades) queued.push(t.id as string);
    return created.map((c) => ({ id: c.id as string, sequence: c.sequence as string }));
  };
  // Settlement's rewrites of each trade as Keel's makes them: into a batch, submitted, confirmed; a step a second.
  // As Keel's: trades into a batch by their ids, then the batch's status by its id.
  let batches: { id: string; status: string }[] = [];
  const settle = async () => {
    for (const b of batches) {
      b.status = b.status === 'BATCHED' ? 'SUBMITTED' : 'CONFIRMED';
      await pool.query(`UPDATE trades SET settlement_status = $2 WHERE settlement_batch_id = $1`, [b.id, b.status]);
    }
    batches = batches.filter((b) => b.status !== 'CONFIRMED');
    if (!queued.length) return;
    const batch = { id: randomUUID(), status: 'BATCHED' };
    await pool.query(`UPDATE trades SET settlement_status = 'BATCHED', settlement_batch_id = $2 WHERE id = ANY($1::uuid[])`, [queued.splice(0), batch.id]);
    batches.push(batch);
  };
  if (!without.has('settlement')) setInterval(() => void settle().catch(() => undefined), 1000).unref();
  return groupCommitted(commitGroup);
}

async function main(): Promise<void> {
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
  const rateLimiter = new RateLimiter(await connectRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), 'keelbench:workfloor:', 100_000, 250);
  // To see what each part costs: WORK_FLOOR_WITHOUT=makers,trades,journal,balances,settlement leaves those out.
  const store = await workFloorStore(pool, process.env.ORGANIZATION_ID!, process.env.MARKET!, new Set((process.env.WORK_FLOOR_WITHOUT ?? '').split(',')));
  const readBody = async (req: IncomingMessage): Promise<WorkFloorOrder> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  };
  serveJson(port(), async (req) => {
    await rateLimiter.consume('Business', 'bench');
    const { id } = await store(await readBody(req));
    return { status: 201, body: { data: { id, status: 'OPEN' } } };
  });
}

const port = () => Number(process.env.PORT);
const text = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x));

if (require.main === module) void main();
