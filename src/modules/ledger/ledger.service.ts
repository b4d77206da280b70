import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { insertRowsPart, rowsOf, StatementPart } from '../../platform/db/one-statement';
import type { MasterWalletService, AddressService } from '../wallets';
import { assetTotals } from './ledger-rows';

export type EntryKind = 'credit' | 'debit' | 'lock' | 'unlock' | 'fill' | 'fee';

/**
 * Where a wallet's money of one asset sits: 'custody', at the wallet's own address (deposits
 * credit it, transfers out take from it), or 'trading', in the settlement contract (orders lock
 * it, trades move it). The order book only ever moves 'trading', the default.
 */
export type LedgerAccount = 'custody' | 'trading';

/**
 * One change to the ledger. walletId null is the venue's fee account (kind 'fee' only).
 * Deltas are base units of the asset; a balance may never go below zero.
 */
export interface LedgerMove {
  organizationId: string | null;
  walletId: string | null;
  assetId: string;
  kind: EntryKind;
  available: bigint;
  locked: bigint;
  reference: string;
  /** 'trading' when absent. */
  account?: LedgerAccount;
}

export interface CreditInput {
  organizationId: string;
  /** A master wallet id or a deposit address id. */
  walletId: string;
  assetId: string;
  /** Base units, > 0. */
  amount: bigint;
  /** Unique per credit (e.g. `deposit:<chainId>:<txHash>:<logIndex>`): a repeated reference is a no-op. */
  reference: string;
  /** 'trading' when absent (what the order book trades); custody-side callers say 'custody'. */
  account?: LedgerAccount;
}

export type DebitInput = CreditInput;

export interface Balance {
  walletId: string;
  assetId: string;
  account: LedgerAccount;
  available: bigint;
  locked: bigint;
}

/** A balance with what the wallet owes in the asset (see WalletDebts). */
export interface BalanceWithDebt extends Balance {
  debt: bigint;
  /** What may be spent (withdrawn or locked by an order): availableMany's rule. */
  spendable: bigint;
}

/** What may be spent of a balance `b` joined to its debt `d`: its available, or nothing while a debt stands (the one rule every spender reads). */
const SPENDABLE_SQL = 'CASE WHEN d.amount > 0 THEN 0 ELSE b.available END';

export interface AssetInvariant {
  assetId: string;
  /** Sum of available + locked over every wallet. */
  balances: bigint;
  /** Collected into the fee account. */
  fees: bigint;
  credited: bigint;
  /** Positive: what left through debits (reversals included). */
  debited: bigint;
  /** Sum of every wallet entry's deltas: must equal `balances` (the table matches its journal). */
  journal: bigint;
  holds: boolean;
}

type Db = Knex | Knex.Transaction;

function isCheckViolation(e: unknown): boolean {
  return (e as { code?: string }).code === '23514';
}

interface BalanceChange {
  walletId: string;
  assetId: string;
  account: LedgerAccount;
  organizationId: string;
  available: bigint;
  locked: bigint;
}

const accountOf = (m: { account?: LedgerAccount }): LedgerAccount => m.account ?? 'trading';

/** Moves summed per (wallet, asset, account), in key order, without the fee account and without no-ops. */
function balanceChanges(moves: LedgerMove[]): BalanceChange[] {
  const sums = new Map<string, BalanceChange>();
  for (const m of moves) {
    if (m.walletId === null) continue;
    const key = `${m.walletId}|${m.assetId}|${accountOf(m)}`;
    const s = sums.get(key) ?? { walletId: m.walletId, assetId: m.assetId, account: accountOf(m), organizationId: m.organizationId!, available: 0n, locked: 0n };
    s.available += m.available;
    s.locked += m.locked;
    sums.set(key, s);
  }
  return [...sums.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, s]) => s)
    .filter((s) => s.available !== 0n || s.locked !== 0n);
}

function journalRows(moves: LedgerMove[], idempotencyKey: string | null) {
  return moves.map((m) => ({
    organizationId: m.organizationId,
    walletId: m.walletId,
    assetId: m.assetId,
    kind: m.kind,
    account: accountOf(m),
    availableDelta: m.available.toString(),
    lockedDelta: m.locked.toString(),
    reference: m.reference,
    idempotencyKey,
  }));
}

/**
 * Moves summed per (wallet, asset, account, kind) under one reference, in first-seen order, without
 * the sums that cancel out: one journal entry for what a commit did to each balance in each way.
 */
function summedMoves(moves: LedgerMove[], reference: string): LedgerMove[] {
  const sums = new Map<string, LedgerMove>();
  for (const m of moves) {
    const key = `${m.walletId}|${m.assetId}|${accountOf(m)}|${m.kind}`;
    const s = sums.get(key);
    if (s) {
      s.available += m.available;
      s.locked += m.locked;
    } else sums.set(key, { ...m, reference });
  }
  return [...sums.values()].filter((s) => s.available !== 0n || s.locked !== 0n);
}

function realMoves(moves: LedgerMove[]): LedgerMove[] {
  const real = moves.filter((m) => m.available !== 0n || m.locked !== 0n);
  for (const m of real) if (m.walletId === null && m.kind !== 'fee') throw new Error('Only fee moves may target the fee account');
  return real;
}

function positiveAmount(amount: bigint): void {
  if (typeof amount !== 'bigint' || amount <= 0n) throw KeelError.invalidField('amount', 'must be a positive whole number of base units');
}

/**
 * The internal ledger: per (wallet, asset) available and locked amounts, and an append-only journal
 * of every change. Money changes commit with what caused them: a deposit or a withdrawal through
 * the caller's transaction, the order book's placements and fills as parts of its one statement.
 *
 * Balance rows are always updated in (wallet_id, asset_id) order within one call, so two
 * transactions that touch the same wallets cannot deadlock on them.
 */
export class LedgerService {
  constructor(
    private readonly db: Knex,
    private readonly masterWallets: MasterWalletService,
    private readonly addresses: AddressService,
  ) {}

  /**
   * Adds `amount` to the wallet's available balance. Idempotent per reference: a second call with
   * the same reference changes nothing and returns applied false (safe for a watcher that retries).
   */
  async credit(trx: Knex.Transaction, input: CreditInput): Promise<{ applied: boolean }> {
    positiveAmount(input.amount);
    const inserted = await this.journal(trx, [{ ...input, kind: 'credit', available: input.amount, locked: 0n }], `credit:${input.reference}`);
    if (!inserted) return { applied: false };
    await this.applyBalances(trx, [{ ...input, kind: 'credit', available: input.amount, locked: 0n }]);
    return { applied: true };
  }

  /**
   * Takes back a credit (a chain reorg dropped the deposit): as much as is still available, at
   * most the credited amount. Idempotent per reference. `shortfall` is what could not be taken
   * back because it is locked in orders or already traded away.
   */
  async reverseCredit(trx: Knex.Transaction, input: { reference: string }): Promise<{ applied: boolean; reversed: bigint; shortfall: bigint; account: LedgerAccount }> {
    const credit = await trx('ledger_entries').where({ idempotencyKey: `credit:${input.reference}` }).first();
    if (!credit) return { applied: false, reversed: 0n, shortfall: 0n, account: 'custody' };
    const amount = BigInt(credit.availableDelta);
    const balance = await trx('ledger_balances').where({ walletId: credit.walletId, assetId: credit.assetId, account: credit.account }).forUpdate().first();
    const available = balance ? BigInt(balance.available) : 0n;
    const take = available < amount ? available : amount;
    const move: LedgerMove = { organizationId: credit.organizationId, walletId: credit.walletId, assetId: credit.assetId, account: credit.account, kind: 'debit', available: -take, locked: 0n, reference: `reversal:${input.reference}` };
    const inserted = await this.journal(trx, [move], `reversal:${input.reference}`);
    if (!inserted) return { applied: false, reversed: 0n, shortfall: 0n, account: credit.account };
    if (take > 0n) await this.applyBalances(trx, [move]);
    return { applied: true, reversed: take, shortfall: amount - take, account: credit.account };
  }

  /** Takes `amount` from available (a withdrawal). INSUFFICIENT_FUNDS when there is not enough. Idempotent per reference. */
  async debit(trx: Knex.Transaction, input: DebitInput): Promise<{ applied: boolean }> {
    positiveAmount(input.amount);
    const move: LedgerMove = { ...input, kind: 'debit', available: -input.amount, locked: 0n };
    const inserted = await this.journal(trx, [move], `debit:${input.reference}`);
    if (!inserted) return { applied: false };
    await this.applyBalances(trx, [move]);
    return { applied: true };
  }

  /**
   * Takes `amount` from available, or all that is available when that is less (money that already
   * left the chain): `shortfall` is what was not there. Journalled under `debit:<reference>` even
   * when nothing could be taken; idempotent per reference (applied false, nothing taken, a second time).
   */
  async debitUpTo(trx: Knex.Transaction, input: DebitInput): Promise<{ applied: boolean; taken: bigint; shortfall: bigint }> {
    positiveAmount(input.amount);
    const balance = await trx('ledger_balances').where({ walletId: input.walletId, assetId: input.assetId, account: accountOf(input) }).forUpdate().first();
    const available = balance && BigInt(balance.available) > 0n ? BigInt(balance.available) : 0n;
    const taken = available < input.amount ? available : input.amount;
    const move: LedgerMove = { ...input, kind: 'debit', available: -taken, locked: 0n };
    if (!(await this.journal(trx, [move], `debit:${input.reference}`))) return { applied: false, taken: 0n, shortfall: 0n };
    if (taken > 0n) await this.applyBalances(trx, [move]);
    return { applied: true, taken, shortfall: input.amount - taken };
  }

  /**
   * A chain reset took the settlement contract with it: what the trading account held of these
   * assets counts at the wallets' addresses again (custody), where the reset's deposit reversals
   * take it back from. Run after the orders locking them were cancelled; idempotent per `reference`.
   */
  async tradingBackToCustody(trx: Knex.Transaction, assetIds: string[], reference: string): Promise<void> {
    if (!assetIds.length) return;
    const rows: { walletId: string; assetId: string; organizationId: string; available: string }[] = await trx('ledger_balances')
      .where({ account: 'trading' })
      .whereIn('assetId', assetIds)
      .where('available', '>', 0)
      .forUpdate()
      .select('walletId', 'assetId', 'organizationId', 'available');
    for (const r of rows) {
      const move = { organizationId: r.organizationId, walletId: r.walletId, assetId: r.assetId, amount: BigInt(r.available), reference: `${reference}:${r.walletId}:${r.assetId}` };
      await this.debit(trx, { ...move, account: 'trading' });
      await this.credit(trx, { ...move, account: 'custody' });
    }
  }

  /** Per asset, what the ledger's balances hold of it in base units (non-zero totals only): after a chain reset, money no chain backs. */
  heldOf(assetIds: string[]): Promise<Record<string, string>> {
    return assetTotals(this.db, assetIds);
  }

  /**
   * Journals and applies a set of moves as parts of one statement (see runAsOneStatement), for a
   * caller that writes everything a command did in a single round trip. Moves on the fee account
   * (walletId null) are journal-only. Balance rows are locked in key order, updated, and created
   * where missing. A balance that would go below zero fails the whole statement with an error that
   * `isInsufficientFunds` recognises. The journal takes one entry per (wallet, asset, account, kind)
   * under `reference` (the commit's), its moves summed: the caller's own rows written in the same
   * statement itemise them (the order book's orders and trades), and a group of orders then appends
   * a few entries rather than a few per order.
   */
  statementParts(moves: LedgerMove[], reference: string): StatementPart[] {
    const real = realMoves(moves);
    if (real.length === 0) return [];
    const parts = [insertRowsPart('ledger_journal', 'ledger_entries', journalRows(summedMoves(real, reference), null))];
    const changes = balanceChanges(real);
    if (changes.length === 0) return parts;
    const changed = rowsOf(
      'ledger_balances',
      changes.map((c) => ({ walletId: c.walletId, assetId: c.assetId, account: c.account, organizationId: c.organizationId, available: c.available.toString(), locked: c.locked.toString() })),
    );
    parts.push(
      { name: 'ledger_changes', sql: `SELECT wallet_id, asset_id, account, organization_id, available, locked FROM ${changed.sql}`, bindings: changed.bindings },
      {
        name: 'ledger_locked',
        // ANY(ARRAY(...)) keeps this an index lookup, as in orders_updated.
        sql: `SELECT wallet_id, asset_id, account FROM ledger_balances
               WHERE wallet_id = ANY(ARRAY(SELECT wallet_id FROM ledger_changes)) AND (wallet_id, asset_id, account) IN (SELECT wallet_id, asset_id, account FROM ledger_changes)
               ORDER BY wallet_id, asset_id, account FOR UPDATE`,
        bindings: [],
      },
      {
        name: 'ledger_updated',
        sql: `UPDATE ledger_balances AS b
                 SET available = b.available + v.available, locked = b.locked + v.locked, updated_at = now()
                FROM ledger_changes AS v JOIN ledger_locked AS l ON l.wallet_id = v.wallet_id AND l.asset_id = v.asset_id AND l.account = v.account
               WHERE b.wallet_id = v.wallet_id AND b.asset_id = v.asset_id AND b.account = v.account AND b.organization_id = v.organization_id
           RETURNING b.wallet_id, b.asset_id, b.account`,
        bindings: [],
      },
      {
        // A wallet's first balance in an asset; a negative start fails the non-negative check.
        name: 'ledger_created',
        sql: `INSERT INTO ledger_balances (wallet_id, asset_id, account, organization_id, available, locked)
              SELECT v.wallet_id, v.asset_id, v.account, v.organization_id, v.available, v.locked FROM ledger_changes AS v
               WHERE NOT EXISTS (SELECT 1 FROM ledger_updated AS u WHERE u.wallet_id = v.wallet_id AND u.asset_id = v.asset_id AND u.account = v.account)`,
        bindings: [],
      },
    );
    return parts;
  }

  /** True for the error a statement built from statementParts fails with when a balance would go below zero. */
  static isInsufficientFunds(e: unknown): boolean {
    return isCheckViolation(e);
  }

  async balance(db: Db, walletId: string, assetId: string, account: LedgerAccount = 'trading'): Promise<Balance> {
    const row = await db('ledger_balances').where({ walletId, assetId, account }).first();
    return { walletId, assetId, account, available: row ? BigInt(row.available) : 0n, locked: row ? BigInt(row.locked) : 0n };
  }

  /**
   * What may be spent (withdrawn or locked by an order) of several (wallet, asset) pairs in one
   * query, keyed `walletId|assetId`; absent rows are absent. The available balance, or nothing
   * while the wallet owes a debt in the asset and account (see WalletDebts): the one rule every spender reads.
   */
  async availableMany(db: Db, keys: { walletId: string; assetId: string }[], account: LedgerAccount = 'trading'): Promise<Map<string, bigint>> {
    const unique = [...new Map(keys.map((k) => [`${k.walletId}|${k.assetId}`, k])).values()];
    const { rows } = await db.raw(
      `SELECT b.wallet_id AS "walletId", b.asset_id AS "assetId", ${SPENDABLE_SQL} AS available
         FROM ledger_balances b LEFT JOIN wallet_debts d ON d.wallet_id = b.wallet_id AND d.asset_id = b.asset_id AND d.account = b.account
        WHERE b.account = ? AND (b.wallet_id, b.asset_id) IN (${unique.map(() => '(?::uuid, ?::uuid)').join(', ')})`,
      [account, ...unique.flatMap((k) => [k.walletId, k.assetId])],
    );
    return new Map((rows as { walletId: string; assetId: string; available: string }[]).map((r) => [`${r.walletId}|${r.assetId}`, BigInt(r.available)]));
  }

  /** availableMany for one pair: 0 when there is no balance. */
  async spendable(db: Db, walletId: string, assetId: string, account: LedgerAccount = 'trading'): Promise<bigint> {
    return (await this.availableMany(db, [{ walletId, assetId }], account)).get(`${walletId}|${assetId}`) ?? 0n;
  }

  /** The wallet's balances in one account, by asset, each with its debt and what of it may be spent (see availableMany). */
  async balances(walletId: string, db: Db = this.db, account: LedgerAccount = 'trading'): Promise<BalanceWithDebt[]> {
    const rows = await db('ledger_balances as b')
      .leftJoin('wallet_debts as d', (j) => j.on('d.walletId', 'b.walletId').andOn('d.assetId', 'b.assetId').andOn('d.account', 'b.account'))
      .where({ 'b.walletId': walletId, 'b.account': account })
      .orderBy('b.assetId')
      .select('b.assetId', 'b.available', 'b.locked', db.raw('coalesce(d.amount, 0)::text AS debt'), db.raw(`${SPENDABLE_SQL} AS spendable`));
    return rows.map((r: { assetId: string; available: string; locked: string; debt: string; spendable: string }) => ({
      walletId,
      assetId: r.assetId,
      account,
      available: BigInt(r.available),
      locked: BigInt(r.locked),
      debt: BigInt(r.debt),
      spendable: BigInt(r.spendable),
    }));
  }

  /** 404 NOT_FOUND unless the id is a master wallet or deposit address of the organisation. */
  async assertWallet(organizationId: string, walletId: string): Promise<void> {
    const notFound = () => new KeelError('NOT_FOUND', 'Wallet not found');
    const isMissing = (e: unknown) => e instanceof KeelError && e.status === 404;
    try {
      await this.masterWallets.row(organizationId, walletId);
      return;
    } catch (e) {
      if (!isMissing(e)) throw e;
    }
    try {
      await this.addresses.row(organizationId, walletId);
    } catch (e) {
      if (isMissing(e)) throw notFound();
      throw e;
    }
  }

  /**
   * Per asset: sum(balances) + fees collected = credited − debited, and the balance table matches
   * the sum of its journal. The query a reconciliation job or a test runs.
   */
  async invariant(db: Db = this.db): Promise<AssetInvariant[]> {
    const { rows } = await db.raw(`
      WITH j AS (
        SELECT asset_id,
               coalesce(sum(available_delta + locked_delta) FILTER (WHERE wallet_id IS NOT NULL), 0) AS journal,
               coalesce(sum(available_delta) FILTER (WHERE kind = 'fee'), 0) AS fees,
               coalesce(sum(available_delta) FILTER (WHERE kind = 'credit'), 0) AS credited,
               coalesce(-sum(available_delta) FILTER (WHERE kind = 'debit'), 0) AS debited
          FROM ledger_entries GROUP BY asset_id
      ), b AS (
        SELECT asset_id, sum(available + locked) AS balances FROM ledger_balances GROUP BY asset_id
      )
      SELECT coalesce(j.asset_id, b.asset_id) AS "assetId", coalesce(b.balances, 0)::text AS balances, coalesce(j.fees, 0)::text AS fees,
             coalesce(j.credited, 0)::text AS credited, coalesce(j.debited, 0)::text AS debited, coalesce(j.journal, 0)::text AS journal
        FROM j FULL JOIN b ON b.asset_id = j.asset_id
       ORDER BY 1`);
    return (rows as Record<string, string>[]).map((r) => {
      const out = {
        assetId: r.assetId,
        balances: BigInt(r.balances),
        fees: BigInt(r.fees),
        credited: BigInt(r.credited),
        debited: BigInt(r.debited),
        journal: BigInt(r.journal),
      };
      return { ...out, holds: out.balances + out.fees === out.credited - out.debited && out.journal === out.balances };
    });
  }

  /** Appends journal rows under a key; false when that key was already journalled. */
  private async journal(trx: Knex.Transaction, moves: LedgerMove[], idempotencyKey: string): Promise<boolean> {
    const rows = journalRows(moves, idempotencyKey);
    // The key's unique index is partial (migration 045): the conflict target names its predicate.
    const inserted = await trx('ledger_entries').insert(rows).onConflict(trx.raw('(idempotency_key) WHERE idempotency_key IS NOT NULL')).ignore().returning('id');
    return inserted.length > 0;
  }

  /** Sums moves per (wallet, asset, account) and applies them in key order. */
  private async applyBalances(trx: Knex.Transaction, moves: LedgerMove[]): Promise<void> {
    for (const s of balanceChanges(moves)) {
      const insufficient = () => new KeelError('INSUFFICIENT_FUNDS', 'Insufficient balance', { walletId: s.walletId, assetId: s.assetId });
      try {
        // PostgreSQL checks an INSERT's candidate row before ON CONFLICT, so update first and
        // insert only a row that starts non-negative.
        const updated = await trx.raw(
          `UPDATE ledger_balances SET available = available + ?::numeric, locked = locked + ?::numeric, updated_at = now()
            WHERE wallet_id = ? AND asset_id = ? AND account = ? AND organization_id = ? RETURNING wallet_id`,
          [s.available.toString(), s.locked.toString(), s.walletId, s.assetId, s.account, s.organizationId],
        );
        if (updated.rows.length > 0) continue;
        const other = await trx('ledger_balances').where({ walletId: s.walletId, assetId: s.assetId, account: s.account }).first();
        if (other) throw new Error(`Ledger: wallet ${s.walletId} belongs to another organisation`);
        if (s.available < 0n || s.locked < 0n) throw insufficient();
        await trx.raw(
          `INSERT INTO ledger_balances (wallet_id, asset_id, account, organization_id, available, locked)
           VALUES (?, ?, ?, ?, ?::numeric, ?::numeric)
           ON CONFLICT (wallet_id, asset_id, account) DO UPDATE
             SET available = ledger_balances.available + EXCLUDED.available,
                 locked = ledger_balances.locked + EXCLUDED.locked,
                 updated_at = now()`,
          [s.walletId, s.assetId, s.account, s.organizationId, s.available.toString(), s.locked.toString()],
        );
      } catch (e) {
        if (isCheckViolation(e)) throw insufficient();
        throw e;
      }
    }
  }
}
