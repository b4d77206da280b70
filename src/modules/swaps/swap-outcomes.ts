import { Knex } from 'knex';
import type { Outbox } from '../../platform/events/outbox';
import { formatScaled } from '../../platform/decimal';
import type { Logger } from '../../platform/logger';
import type { ChainNetworks, ChainService } from '../chains';
import type { SendingWallets, WatchedWallets } from '../wallets';
import type { SendingItem, TransferOutcomeListener } from '../withdrawals';
import { DexQuoter } from './dex-quoter';

/**
 * Credits to a wallet's custody what the chain brought to its address, as for any deposit
 * (CustodyLedgerSync.creditFromChain): once per reference, repaying first what the wallet owes in
 * the asset.
 */
export interface ChainCredit {
  creditFromChain(trx: Knex.Transaction, credit: { organizationId: string; walletId: string; assetId: string; amount: bigint; reference: string }): Promise<void>;
}

/** A swap as it ended: what the listeners of swap outcomes (settlement rules) are told. */
export interface SwapOutcome {
  swapId: string;
  status: 'EXECUTED' | 'FAILED';
  txHash: string | null;
  outputRaw: bigint | null;
  error: string | null;
}

/**
 * Settles a swap when the transaction sender finishes its swap line, in the transaction that
 * records the line: the output read from the mined receipt's Swap event, and *.swap_executed or
 * *.swap_failed with the spec's data (srcWalet spelled as the spec spells it).
 */
export class SwapOutcomes implements TransferOutcomeListener {
  constructor(
    private readonly networks: ChainNetworks,
    private readonly chains: ChainService,
    private readonly wallets: SendingWallets,
    private readonly outbox: Outbox,
    private readonly watched: WatchedWallets,
    private readonly ledger: ChainCredit,
    private readonly logger: Logger,
  ) {}

  async executed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    await this.settle(trx, item, true);
  }

  async failed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    await this.settle(trx, item, false);
  }

  private async settle(trx: Knex.Transaction, item: SendingItem, mined: boolean): Promise<void> {
    if (item.kind !== 'swap') return;
    const swap = await trx('swaps').where({ swapItemId: item.id }).forUpdate().first();
    if (!swap || swap.status === 'EXECUTED' || swap.status === 'FAILED') return;
    let outputRaw: bigint | null = null;
    if (mined && item.txHash) {
      const receipt = await this.networks.get(item.blockchainId)?.provider.getTransactionReceipt(item.txHash);
      outputRaw = receipt ? DexQuoter.outputOf(receipt) : null;
      if (outputRaw === null) this.logger.warn({ swapId: swap.id, txHash: item.txHash }, 'swap mined but its output could not be read from the receipt');
    }
    const status = mined ? 'EXECUTED' : 'FAILED';
    const error = mined ? null : (item as SendingItem & { error?: string | null }).error ?? 'the swap transaction failed';
    if (outputRaw !== null && outputRaw > 0n) await this.creditNativeOutput(trx, swap, outputRaw);
    await trx('swaps')
      .where({ id: swap.id })
      .update({ status, outputRaw: outputRaw?.toString() ?? null, txHash: item.txHash, gasFee: item.feePaid ?? null, error, updatedAt: trx.fn.now() });
    await this.outbox.publish(trx, await this.event(swap, item, status, outputRaw, error));
  }

  /**
   * The router pays a native-coin output with an internal call, which the deposit watcher (it reads
   * top-level transactions and token logs) does not see: when the recipient is a wallet Keel
   * watches, it is credited here, once per swap, as a deposit is (a debt of the wallet in the coin
   * is repaid from it first). Token outputs are ordinary deposits.
   */
  private async creditNativeOutput(trx: Knex.Transaction, swap: Record<string, any>, outputRaw: bigint): Promise<void> {
    const dst = await this.chains.assetRow(swap.dstAssetId);
    if (!dst?.isNative) return;
    const wallet = (await this.watched.on(swap.blockchainId)).get(String(swap.recipient).toLowerCase());
    if (!wallet) return;
    await this.ledger.creditFromChain(trx, { organizationId: wallet.organizationId, walletId: wallet.id, assetId: dst.id, amount: outputRaw, reference: `swap-output:${swap.id}` });
  }

  private async event(swap: Record<string, any>, item: SendingItem, status: string, outputRaw: bigint | null, error: string | null) {
    const [src, dst, chain, wallet] = await Promise.all([
      this.chains.assetRow(swap.srcAssetId),
      this.chains.assetRow(swap.dstAssetId),
      this.chains.blockchainRow(swap.blockchainId),
      this.wallets.resolve(swap.organizationId, swap.addressId ? { addressId: swap.addressId } : { masterWalletId: swap.masterWalletId }).catch(() => null),
    ]);
    const explorer = (chain.configurations as { explorerUrl?: string } | null)?.explorerUrl;
    const txhash = item.txHash ?? '';
    return {
      organizationId: swap.organizationId,
      type: `${swap.addressId ? 'address' : 'master'}.${status === 'EXECUTED' ? 'swap_executed' : 'swap_failed'}`,
      data: {
        swapId: swap.id,
        status,
        txhash,
        explorerUrl: explorer && txhash ? `${explorer.replace(/\/$/, '')}/tx/${txhash}` : '',
        srcWalet: { id: swap.addressId ?? swap.masterWalletId, name: wallet?.name ?? null, walletAddress: swap.fromAddress },
        dstAddress: swap.recipient,
        srcAsset: { id: src!.id, symbol: src!.symbol, decimals: src!.decimals },
        dstAsset: { id: dst!.id, symbol: dst!.symbol, decimals: dst!.decimals },
        inputAmount: Number(formatScaled(BigInt(swap.inputRaw), src!.decimals)),
        outputAmount: outputRaw === null ? 0 : Number(formatScaled(outputRaw, dst!.decimals)),
        minOutputAmount: Number(formatScaled(BigInt(swap.minOutputRaw), dst!.decimals)),
        blockchain: { id: chain.id, name: chain.name },
        gasFee: item.feePaid ? formatScaled(BigInt(item.feePaid), 18) : '0',
        error,
      },
    };
  }
}
