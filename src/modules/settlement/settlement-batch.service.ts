import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { Ids } from '../../platform/ids';
import { fetchPage } from '../../platform/db/fetch-page';
import { toPage, PageResult, PageWindow } from '../../platform/paging';
import { formatScaled } from '../../platform/decimal';
import { SettlementBatchModel, SettlementBatchTransitionModel } from './settlement-batch.model';
import type { BatchStatus } from './settlement-batch.domain';
import type { MarketService } from '../markets';
import type { ChainService } from '../chains';

export interface SettlementBatchFilter extends PageWindow {
  status?: BatchStatus;
  /** Market symbol: batches holding trades of this market. */
  market?: string;
}

export interface SettlementTransitionView {
  from: string | null;
  to: string;
  txHash: string | null;
  detail: string | null;
  at: Date;
}

/** A settlement batch as the API shows it. */
export interface SettlementBatchView {
  id: string;
  status: BatchStatus;
  blockchainId: string;
  chainId: string;
  markets: string[];
  tradeCount: number;
  tradeIds: string[];
  txHash: string | null;
  replacedTxHashes: string[];
  blockNumber: string | null;
  gasUsed: string | null;
  /** What the transaction paid: gas used × effective gas price (and an OP-stack rollup's L1 data fee), in the chain's native coin. */
  feePaid: string | null;
  failureReason: string | null;
  parentBatchId: string | null;
  submittedAt: Date | null;
  confirmedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  transitions: SettlementTransitionView[];
}

/**
 * Settlement batches of the deployment's order book: every organisation trades on the same markets,
 * so batches (like markets and market trades) are shared, readable with orderbook_settlement:read.
 */
export class SettlementBatchService {
  constructor(
    private readonly db: Knex,
    private readonly markets: MarketService,
    private readonly chains: ChainService,
  ) {}

  async list(filter: SettlementBatchFilter): Promise<PageResult<SettlementBatchView>> {
    let marketId: string | null = null;
    if (filter.market) {
      marketId = (await this.markets.idOf(filter.market)) ?? null;
      if (!marketId) return toPage([], 0, filter);
    }
    const q = SettlementBatchModel.query(this.db).modify((b) => {
      if (filter.status) b.where({ status: filter.status });
      if (marketId) b.whereRaw('? = ANY(market_ids)', [marketId]);
    });
    const { rows, total } = await fetchPage<SettlementBatchModel>(q, filter, [{ column: 'createdAt', order: 'desc' }, { column: 'id', order: 'desc' }]);
    return toPage(await this.views(rows), total, filter);
  }

  async get(id: string): Promise<SettlementBatchView> {
    id = Ids.uuid('Settlement batch', id);
    const row = await SettlementBatchModel.query(this.db).findById(id);
    if (!row) throw KeelError.notFound('Settlement batch');
    return (await this.views([row]))[0];
  }

  private async views(rows: SettlementBatchModel[]): Promise<SettlementBatchView[]> {
    if (!rows.length) return [];
    const [transitions, symbol, chains] = await Promise.all([
      SettlementBatchTransitionModel.query(this.db).whereIn('batchId', rows.map((r) => r.id)).orderBy('id'),
      this.markets.symbolsOf(rows.flatMap((r) => r.marketIds)),
      this.chains.blockchainViews(rows.map((r) => r.blockchainId)),
    ]);
    const chainId = new Map([...chains.values()].map((c) => [c.id, String(c.chainId)]));
    return rows.map((r) => ({
      id: r.id,
      status: r.status as BatchStatus,
      blockchainId: r.blockchainId,
      chainId: chainId.get(r.blockchainId) ?? '',
      markets: r.marketIds.map((m) => symbol.get(m) ?? m),
      tradeCount: r.tradeCount,
      tradeIds: r.tradeIds,
      txHash: r.txHash,
      replacedTxHashes: r.replacedTxHashes ?? [],
      blockNumber: r.blockNumber === null ? null : String(r.blockNumber),
      gasUsed: r.gasUsed === null ? null : String(r.gasUsed),
      feePaid: r.feePaid === null ? null : formatScaled(BigInt(r.feePaid), 18),
      failureReason: r.failureReason,
      parentBatchId: r.parentBatchId,
      submittedAt: r.submittedAt,
      confirmedAt: r.confirmedAt,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      transitions: transitions.filter((t) => t.batchId === r.id).map((t) => ({ from: t.fromStatus, to: t.toStatus, txHash: t.txHash, detail: t.detail, at: t.at })),
    }));
  }
}
