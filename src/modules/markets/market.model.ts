import { Model } from 'objection';

export class MarketModel extends Model {
  static override tableName = 'markets';
  id!: string;
  symbol!: string;
  baseAssetId!: string;
  quoteAssetId!: string;
  /** NUMERIC columns come back as strings. */
  tickSize!: string;
  lotSize!: string;
  minNotional!: string;
  makerFee!: string;
  takerFee!: string;
  status!: 'ACTIVE' | 'HALTED';
  sequence!: string;
  /** Moved by the database whenever status, fees or minimum change (migration 011). */
  rulesVersion!: string;
  createdAt!: Date;
  updatedAt!: Date;
}
