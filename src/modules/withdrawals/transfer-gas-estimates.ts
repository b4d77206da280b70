import { KeelError } from '../../platform/errors';
import { formatScaled } from '../../platform/decimal';
import type { ChainNetworks, ChainService } from '../chains';
import type { SendingWallets } from '../wallets';
import { transactionRequest } from './transaction-request';
import { priceLines } from './transfer-lines';
import type { GasEstimateView, TransferLine } from './transfer.domain';

/** What sending lines from a master wallet would cost in gas at the chain's current fees; nothing is recorded. */
export class TransferGasEstimates {
  constructor(
    private readonly wallets: SendingWallets,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
  ) {}

  async estimate(organizationId: string, masterWalletId: string, assets: TransferLine[]): Promise<GasEstimateView> {
    const wallet = await this.wallets.resolve(organizationId, { masterWalletId });
    const { network, lines } = await priceLines(this.chains, this.networks, wallet, assets);
    const [fees, limits] = await Promise.all([
      network.provider.getFeeData(),
      Promise.all(lines.map((l) => network.provider.estimateGas({ from: wallet.address, ...transactionRequest(l.asset, l.recipient, l.rawAmount, l.tokenId === undefined ? undefined : { from: wallet.address, tokenId: l.tokenId }) }).catch(() => null))),
    ]);
    const failed = limits.findIndex((l) => l === null);
    if (failed >= 0) throw new KeelError('INSUFFICIENT_FUNDS', `assets.${failed}: the chain refuses this transfer from ${wallet.address} (balance too low?)`, { fields: [{ field: `assets.${failed}`, error: 'INVALID_FIELD' }] });
    const gas = (limits as bigint[]).reduce((a, b) => a + b, 0n);
    const wei = gas * (fees.maxFeePerGas ?? fees.gasPrice ?? 0n);
    const chain = await this.chains.getBlockchain(network.blockchainId);
    return {
      assets: lines.map((l) => ({ amount: formatScaled(l.rawAmount, l.asset.decimals), asset: l.asset, blockchain: chain, destinationAddress: l.recipient })),
      estimatedFee: { amount: formatScaled(wei, 18), value: wei.toString(), callGasLimit: gas.toString(), verificationGasLimi: '0' },
    };
  }
}
