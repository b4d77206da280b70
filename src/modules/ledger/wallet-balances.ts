import { Ids } from '../../platform/ids';
import { formatScaled } from '../../platform/decimal';
import { KeelError } from '../../platform/errors';
import type { ChainService } from '../chains';
import type { LedgerService } from './ledger.service';

/** A wallet's balance of one asset in the ledger, in whole units of the asset. */
export interface WalletBalance {
  walletId: string;
  assetId: string;
  symbol: string;
  /** What orders and withdrawals may take now: nothing while a debt stands in the asset (the ledger's spendable). */
  available: string;
  /** Held by open orders. */
  locked: string;
  /** Owed after a chain reorg took back a deposit already spent or locked. */
  debt: string;
}

/** Wallets' ledger balances as the API shows them. */
export class WalletBalances {
  constructor(
    private readonly ledger: LedgerService,
    private readonly chains: ChainService,
  ) {}

  /** The wallet's ledger balances, available as the ledger lets it be spent (the wallet must be the organisation's, else 404). */
  async of(organizationId: string, walletId: string): Promise<WalletBalance[]> {
    if (!Ids.isUuid(walletId)) throw new KeelError('NOT_FOUND', 'Wallet not found');
    const id = walletId.toLowerCase();
    await this.ledger.assertWallet(organizationId, id);
    const balances = await this.ledger.balances(id);
    return Promise.all(
      balances.map(async (b) => {
        const asset = await this.chains.assetRow(b.assetId);
        const decimals = asset?.decimals ?? 0;
        return { walletId: id, assetId: b.assetId, symbol: asset?.symbol ?? '', available: formatScaled(b.spendable, decimals), locked: formatScaled(b.locked, decimals), debt: formatScaled(b.debt, decimals) };
      }),
    );
  }
}
