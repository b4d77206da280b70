import { Model } from 'objection';

/** NUMERIC and BIGINT columns come back as strings. */
export class OrderModel extends Model {
  static override tableName = 'orders';
  id!: string;
  organizationId!: string;
  marketId!: string;
  walletId!: string;
  clientOrderId!: string | null;
  side!: 'BUY' | 'SELL';
  type!: 'LIMIT' | 'MARKET';
  timeInForce!: 'GTC' | 'IOC' | 'FOK';
  postOnly!: boolean;
  price!: string | null;
  quantity!: string;
  priceTicks!: string | null;
  quantityLots!: string;
  remainingLots!: string;
  filledLots!: string;
  filledNotional!: string;
  feesPaid!: string;
  status!: 'OPEN' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELLED' | 'REJECTED' | 'EXPIRED';
  statusReason!: string | null;
  lockAssetId!: string | null;
  lockedAmount!: string;
  sequence!: string;
  restSequence!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}

export class TradeModel extends Model {
  static override tableName = 'trades';
  id!: string;
  marketId!: string;
  sequence!: string;
  makerOrderId!: string;
  takerOrderId!: string;
  makerWalletId!: string;
  takerWalletId!: string;
  takerSide!: 'BUY' | 'SELL';
  price!: string;
  quantity!: string;
  quoteAmount!: string;
  makerFee!: string;
  takerFee!: string;
  settlementBatchId!: string | null;
  settlementStatus!: string;
  createdAt!: Date;
}
