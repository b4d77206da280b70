import { KeelError } from '../../platform/errors';
import { formatScaled } from '../../platform/decimal';
import { RecipientRefused, TransferRefused } from '../../platform/chain-port/chain-port';
import type { ChainNetworks, ChainService } from '../chains';
import type { SendingWallets } from '../wallets';
import { priceLines } from './transfer-lines';
import { chainAsset } from '../../platform/chain-port/chain-port';
import { feeDecimals, invalidRecipient } from './transfer-families';
import type { GasEstimateView, TransferLine } from './transfer.domain';

/**
 * What sending lines from a master wallet would cost at the chain's current fees, through its chain
 * port; nothing is recorded. EVM: gas at the node's max fee per gas (callGasLimit the gas); Solana:
 * the network fees and the rent of each recipient's token account to create, in lamports (callGasLimit
 * the compute units).
 */
export class TransferGasEstimates {
  constructor(
    private readonly wallets: SendingWallets,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
  ) {}

  async estimate(organizationId: string, masterWalletId: string, assets: TransferLine[]): Promise<GasEstimateView> {
    const wallet = await this.wallets.resolve(organizationId, { masterWalletId });
    const { chain: sending, lines } = await priceLines(this.chains, this.networks, wallet, assets);
    const estimates = await Promise.all(
      lines.map((l, i) =>
        sending.port.estimateTransfer(wallet.address, { to: l.recipient, asset: chainAsset(l.asset, l.tokenId), amount: l.rawAmount }).catch((e: unknown) => {
          if (e instanceof KeelError) throw e;
          if (!(e instanceof TransferRefused)) throw new KeelError('UPSTREAM_ERROR', "The chain's node did not answer the gas estimate; try again shortly");
          if (e instanceof RecipientRefused) throw invalidRecipient(`assets.${i}.recipient`, `assets.${i}.recipient: ${e.message}`);
          throw new KeelError('INSUFFICIENT_FUNDS', `assets.${i}: the chain refuses this transfer from ${wallet.address} (balance too low?): ${e.message}`, { fields: [{ field: `assets.${i}`, error: 'INVALID_FIELD' }] });
        }),
      ),
    );
    const cost = estimates.reduce((sum, e) => sum + e.fee + e.accountCreation, 0n);
    const units = estimates.reduce((sum, e) => sum + (e.units ?? 0n), 0n);
    const chain = await this.chains.getBlockchain(sending.blockchainId);
    return {
      assets: lines.map((l) => ({ amount: formatScaled(l.rawAmount, l.asset.decimals), asset: l.asset, blockchain: chain, destinationAddress: l.recipient })),
      estimatedFee: { amount: formatScaled(cost, feeDecimals(chain)), value: cost.toString(), callGasLimit: units.toString(), verificationGasLimi: '0' },
    };
  }
}
