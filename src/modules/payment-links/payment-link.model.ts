import { Model } from 'objection';

export class PaymentLinkModel extends Model {
  static override tableName = 'payment_links';
  id!: string;
  refId!: string;
  organizationId!: string;
  name!: string;
  description!: string | null;
  slug!: string;
  channel!: string;
  currency!: string;
  /** NUMERIC as PostgreSQL returns it; null for an open amount. */
  amount!: string | null;
  paymentLimit!: number | null;
  paymentsConsumed!: number;
  expiresAt!: Date | null;
  evmSettlementWalletId!: string;
  solanaSettlementWalletId!: string | null;
  allowedBlockchainIds!: string[];
  allowedAssetIds!: string[];
  redirectUrl!: string | null;
  successMessage!: string | null;
  failureMessage!: string | null;
  metadata!: Record<string, unknown>;
  imgUrl!: string | null;
  isActive!: boolean;
  deletedAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;
}
