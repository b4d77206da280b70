import { Knex } from 'knex';
import type { MarketRules } from '../../engine';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import { KeelError } from '../../platform/errors';
import type { ChainService } from '../chains';
import { divideCeil, exactInDecimals, formatDecimal, normalizeDecimal, parseDecimal, pow10, Scaled, toUnits } from '../../platform/decimal';
import { MarketModel } from './market.model';
import { MARKET_SYMBOL, MARKET_SYMBOL_RULE, MarketStatus } from './market.domain';
import { fetchPage } from '../../platform/db/fetch-page';
import { part, StatementPart } from '../../platform/db/one-statement';
import type { RedisChannel } from '../../platform/redis-channel';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { Hook } from '../../platform/events/hooks';

/** A market's id and symbol, and its last committed sequence number as stored. */
export interface MarketSequence {
  id: string;
  symbol: string;
  sequence: string;
}

/** A market as services and the API show it: decimals as normalised strings. */
export interface MarketView {
  id: string;
  /** BASE-QUOTE, e.g. ETH-USDC. */
  symbol: string;
  baseAssetId: string;
  quoteAssetId: string;
  baseSymbol: string;
  quoteSymbol: string;
  /** The chain both assets live on. */
  blockchainId: string;
  /** Price increment, in quote per one base. */
  tickSize: string;
  /** Quantity increment, in base. */
  lotSize: string;
  /** Smallest price × quantity of a LIMIT order, in quote. */
  minNotional: string;
  makerFee: string;
  takerFee: string;
  status: MarketStatus;
  createdAt: Date;
  updatedAt: Date;
}

export interface MarketFilter {
  status?: MarketStatus;
}

/** A new market; minimum and fees default to "0", status to ACTIVE. */
export interface CreateMarket {
  symbol: string;
  baseAssetId: string;
  quoteAssetId: string;
  tickSize: string;
  lotSize: string;
  minNotional?: string;
  makerFee?: string;
  takerFee?: string;
  status?: MarketStatus;
}

/** What may change once a market exists (tick and lot size are fixed): a field left out keeps its value; null is refused. */
export interface UpdateMarket {
  minNotional?: string | null;
  makerFee?: string | null;
  takerFee?: string | null;
  status?: MarketStatus | null;
}

const UPDATABLE = ['minNotional', 'makerFee', 'takerFee', 'status'] as const;

/** Highest fee rate a market may charge (10%). */
const MAX_FEE_PPM = 100_000n;

/**
 * Everything the order service needs to turn decimals into the engine's integers and back.
 *
 * - price ticks = price / tickSize; quantity lots = quantity / lotSize (both exact, else 422)
 * - one lot is `lotUnits` base units of the base asset
 * - one tick × one lot is `notionalUnit` base units of the quote asset; minNotional is expressed
 *   in those units inside the engine, fees and buy locks in the quote's base units
 */
export interface TradingRules {
  market: MarketView;
  baseDecimals: number;
  quoteDecimals: number;
  tick: Scaled;
  lot: Scaled;
  lotUnits: bigint;
  notionalUnit: bigint;
  engine: MarketRules;
  /** The market's last committed engine sequence. */
  sequence: number;
  /** The version of status, fees and minimum these rules were read at (migration 011). */
  rulesVersion: number;
}

export function marketView(m: MarketModel, base: { symbol: string; blockchainId: string }, quote: { symbol: string }): MarketView {
  return {
    id: m.id,
    symbol: m.symbol,
    baseAssetId: m.baseAssetId,
    quoteAssetId: m.quoteAssetId,
    baseSymbol: base.symbol,
    quoteSymbol: quote.symbol,
    blockchainId: base.blockchainId,
    tickSize: normalizeDecimal(m.tickSize),
    lotSize: normalizeDecimal(m.lotSize),
    minNotional: normalizeDecimal(m.minNotional),
    makerFee: normalizeDecimal(m.makerFee),
    takerFee: normalizeDecimal(m.takerFee),
    status: m.status as MarketStatus,
    createdAt: m.createdAt,
    updatedAt: m.updatedAt,
  };
}

function positive(field: string, text: string): Scaled {
  const v = parseDecimal(text);
  if (!v || v.int <= 0n) throw KeelError.invalidField(field, 'must be a positive decimal');
  return v;
}

function feePpm(field: string, text: string): bigint {
  const v = parseDecimal(text);
  const ppm = v ? toUnits(v, 6) : null;
  if (ppm === null) throw KeelError.invalidField(field, `${exactInDecimals(6, { what: 'a decimal rate' })}, e.g. "0.001"`);
  if (ppm > MAX_FEE_PPM) throw KeelError.invalidField(field, 'must be at most 0.1');
  return ppm;
}

type ChangeListener = (marketId: string) => Promise<void> | void;

/** Markets: the pairs this deployment trades, with their tick, lot, minimum and fees. */
export class MarketService {
  /** Awaited in order; an error reaches the caller of `changed` (the change itself is committed). */
  private readonly changeHook = new Hook<Parameters<ChangeListener>>();

  constructor(
    private readonly db: Knex,
    private readonly chains: ChainService,
    private readonly uow: UnitOfWork,
    /** Tells the other nodes a market's rules changed, so an idle node reloads them at once. */
    private readonly changes?: RedisChannel,
  ) {}

  /** Called after a market's rules or status change, on this node or (once listening) any other. */
  onChange(listener: ChangeListener): void {
    this.changeHook.add(listener);
  }

  /** Hears the changes other nodes announce (the order-book role listens). */
  listenForChanges(): Promise<void> {
    return this.changes?.listen((marketId) => void this.changed(marketId).catch(() => undefined)) ?? Promise.resolve();
  }

  stopListening(): Promise<void> {
    return this.changes?.close() ?? Promise.resolve();
  }

  async list(args: PageWindow & MarketFilter): Promise<PageResult<MarketView>> {
    const q = MarketModel.query(this.db).modify((b) => (args.status ? b.where('status', args.status) : b));
    const { rows, total } = await fetchPage<MarketModel>(q, args, [{ column: 'symbol' }]);
    return toPage(await this.views(rows), total, args);
  }

  /** Every market's id, for loading engines at start. */
  async ids(): Promise<string[]> {
    return (await MarketModel.query(this.db).select('id')).map((m) => m.id);
  }

  /** Every market's id, symbol and stored sequence, by symbol: the order book picks its shards' markets from it. */
  async sequences(): Promise<MarketSequence[]> {
    return this.db('markets').select('id', 'symbol', 'sequence').orderBy('symbol');
  }

  /** The id of the market with this symbol (any case), or undefined. */
  async idOf(symbol: string): Promise<string | undefined> {
    return (await MarketModel.query(this.db).findOne({ symbol: symbol.toUpperCase() }).select('id'))?.id;
  }

  /** The symbols of the markets with these ids, by id. */
  async symbolsOf(ids: string[]): Promise<Map<string, string>> {
    const rows = ids.length ? await MarketModel.query(this.db).whereIn('id', [...new Set(ids)]).select('id', 'symbol') : [];
    return new Map(rows.map((m) => [m.id, m.symbol]));
  }

  async get(symbol: string): Promise<MarketView> {
    return (await this.views([await this.row(symbol)]))[0];
  }

  /** The market by symbol (or by id), or 404 NOT_FOUND. */
  async row(symbolOrId: string, trx: Knex | Knex.Transaction = this.db): Promise<MarketModel> {
    const bySymbol = await MarketModel.query(trx).findOne({ symbol: symbolOrId.toUpperCase() });
    const row = bySymbol ?? (Ids.isUuid(symbolOrId) ? await MarketModel.query(trx).findById(symbolOrId.toLowerCase()) : undefined);
    if (!row) throw new KeelError('NOT_FOUND', `Market '${symbolOrId}' not found`);
    return row;
  }

  async create(input: CreateMarket): Promise<MarketView> {
    // The API's input checks it too; the operator's command line reaches the service directly.
    if (!MARKET_SYMBOL.test(input.symbol)) throw KeelError.invalidField('symbol', MARKET_SYMBOL_RULE);
    const baseAssetId = Ids.isUuid(input.baseAssetId) ? input.baseAssetId.toLowerCase() : null;
    const quoteAssetId = Ids.isUuid(input.quoteAssetId) ? input.quoteAssetId.toLowerCase() : null;
    const base = baseAssetId ? await this.chains.assetRow(baseAssetId) : undefined;
    const quote = quoteAssetId ? await this.chains.assetRow(quoteAssetId) : undefined;
    if (!base) throw KeelError.invalidField('baseAssetId', 'is not a known asset');
    if (!quote) throw KeelError.invalidField('quoteAssetId', 'is not a known asset');
    if (base.id === quote.id) throw KeelError.invalidField('quoteAssetId', 'must differ from baseAssetId');
    if (base.blockchainId !== quote.blockchainId) throw KeelError.invalidField('quoteAssetId', 'must be on the same blockchain as the base asset (trades settle on-chain)');
    const values = {
      tickSize: input.tickSize,
      lotSize: input.lotSize,
      minNotional: input.minNotional ?? '0',
      makerFee: input.makerFee ?? '0',
      takerFee: input.takerFee ?? '0',
    };
    this.rulesFrom(values, base.decimals, quote.decimals);
    try {
      return await this.uow.run('market.create', async (trx) => {
        const existing = await MarketModel.query(trx).findOne({ symbol: input.symbol });
        if (existing) throw new KeelError('DUPLICATE_ENTRY', `Market '${input.symbol}' already exists`);
        const row = await MarketModel.query(trx).insertAndFetch({
          symbol: input.symbol,
          baseAssetId: base.id,
          quoteAssetId: quote.id,
          ...values,
          status: input.status ?? MarketStatus.ACTIVE,
        });
        return marketView(row, base, quote);
      });
    } catch (e) {
      if ((e as { nativeError?: { code?: string }; code?: string }).nativeError?.code === '23505' || (e as { code?: string }).code === '23505') {
        throw new KeelError('DUPLICATE_ENTRY', `Market '${input.symbol}' already exists`);
      }
      throw e;
    }
  }

  async update(symbol: string, input: UpdateMarket): Promise<MarketView> {
    const row = await this.uow.run('market.update', async (trx) => {
      const current = await this.row(symbol, trx);
      const locked = await MarketModel.query(trx).findById(current.id).forUpdate();
      const patch: Partial<Pick<MarketModel, (typeof UPDATABLE)[number]>> = {};
      for (const field of UPDATABLE) {
        const value = input[field];
        if (value === null) throw KeelError.invalidField(field, 'must not be null: leave it out to keep the current value');
        if (value !== undefined) Object.assign(patch, { [field]: value });
      }
      const merged = { ...locked!, ...patch };
      const [base, quote] = await Promise.all([this.chains.assetRow(merged.baseAssetId), this.chains.assetRow(merged.quoteAssetId)]);
      this.rulesFrom(merged, base!.decimals, quote!.decimals);
      if (Object.keys(patch).length === 0) return locked!;
      return MarketModel.query(trx).patchAndFetchById(current.id, { ...patch, updatedAt: new Date() });
    });
    await this.changed(row.id);
    this.changes?.announce(row.id);
    return (await this.views([row]))[0];
  }

  /** The market's integer rules, from its current row. */
  async tradingRules(marketId: string): Promise<TradingRules> {
    const row = await this.row(marketId);
    const [base, quote] = await Promise.all([this.chains.assetRow(row.baseAssetId), this.chains.assetRow(row.quoteAssetId)]);
    const rules = this.rulesFrom(row, base!.decimals, quote!.decimals);
    return { market: marketView(row, base!, quote!), baseDecimals: base!.decimals, quoteDecimals: quote!.decimals, sequence: Number(row.sequence), rulesVersion: Number(row.rulesVersion), ...rules };
  }

  /** The market's stored rules version, to tell whether rules read earlier are still the market's. */
  async rulesVersion(marketId: string): Promise<number> {
    const row = await this.db('markets').where({ id: marketId }).first('rulesVersion');
    return Number(row?.rulesVersion);
  }

  /**
   * Moves the market's sequence from `from` to `to`, as a part of the statement that commits its
   * commands. The part requires its row: if the stored sequence is no longer `from` (another
   * process wrote to this market) or its rules are no longer at `rulesVersion` (halted, or fees or
   * minimum changed since the engine read them), the whole statement is refused and nothing is
   * written. The UPDATE waits for a concurrent market change and re-checks the row it committed,
   * so a commit is ordered either before a halt or after it, never beside it.
   */
  sequencePart(marketId: string, from: number, to: number, rulesVersion: number): StatementPart {
    const fenced = this.db('markets').where({ id: marketId, sequence: String(from), rulesVersion: String(rulesVersion) });
    return { ...part('market_sequence', fenced.update({ sequence: String(to) }, ['id'])), expectRows: 1 };
  }

  /** Asset decimals by id, for rendering ledger amounts. */
  async assetDecimals(assetId: string): Promise<{ symbol: string; decimals: number } | undefined> {
    const a = await this.chains.assetRow(assetId);
    return a ? { symbol: a.symbol, decimals: a.decimals } : undefined;
  }

  private rulesFrom(
    v: { tickSize: string; lotSize: string; minNotional: string; makerFee: string; takerFee: string },
    baseDecimals: number,
    quoteDecimals: number,
  ): Omit<TradingRules, 'market' | 'baseDecimals' | 'quoteDecimals' | 'sequence' | 'rulesVersion'> {
    const tick = positive('tickSize', normalizeDecimal(v.tickSize));
    const lot = positive('lotSize', normalizeDecimal(v.lotSize));
    const minNotional = parseDecimal(normalizeDecimal(v.minNotional));
    if (!minNotional) throw KeelError.invalidField('minNotional', 'must be a non-negative decimal');
    const makerFeePpm = feePpm('makerFee', normalizeDecimal(v.makerFee));
    const takerFeePpm = feePpm('takerFee', normalizeDecimal(v.takerFee));
    const lotUnits = toUnits(lot, baseDecimals);
    if (lotUnits === null) throw KeelError.invalidField('lotSize', `${exactInDecimals(baseDecimals, { what: 'a decimal', of: 'the base asset' })}: a whole number of its base units`);
    const notionalUnit = toUnits({ int: tick.int * lot.int, scale: tick.scale + lot.scale }, quoteDecimals);
    if (notionalUnit === null) {
      throw KeelError.invalidField('tickSize', `tickSize × lotSize (${formatDecimal({ int: tick.int * lot.int, scale: tick.scale + lot.scale })}) must be a whole number of quote base units (10^-${quoteDecimals})`);
    }
    const minTicksLots = divideCeil({ int: minNotional.int * pow10(quoteDecimals), scale: minNotional.scale }, { int: notionalUnit, scale: 0 });
    if (minTicksLots > BigInt(Number.MAX_SAFE_INTEGER)) throw KeelError.invalidField('minNotional', 'is too large');
    return {
      tick,
      lot,
      lotUnits,
      notionalUnit,
      engine: { minNotional: Number(minTicksLots), makerFeePpm: Number(makerFeePpm), takerFeePpm: Number(takerFeePpm), notionalUnit },
    };
  }

  private async changed(marketId: string): Promise<void> {
    await this.changeHook.run(marketId);
  }

  private async views(rows: MarketModel[]): Promise<MarketView[]> {
    const ids = [...new Set(rows.flatMap((r) => [r.baseAssetId, r.quoteAssetId]))];
    const assets = new Map<string, { symbol: string; blockchainId: string }>();
    await Promise.all(
      ids.map(async (id) => {
        const a = await this.chains.assetRow(id);
        if (a) assets.set(id, a);
      }),
    );
    return rows.map((r) => marketView(r, assets.get(r.baseAssetId)!, assets.get(r.quoteAssetId)!));
  }
}
