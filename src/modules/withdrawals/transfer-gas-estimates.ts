import { KeelError } from '../../platform/errors';
import { formatScaled } from '../../platform/decimal';
import type { ChainNetworks, ChainService, SolanaNetwork } from '../chains';
import { TransferRefused } from '../../platform/chain-port/solana-chain';
import type { SendingWallets } from '../wallets';
import { transactionRequest } from './transaction-request';
import { priceLines } from './transfer-lines';
import type { GasEstimateView, PricedLine, TransferLine } from './transfer.domain';

/** What sending lines from a master wallet would cost in gas at the chain's current fees; nothing is recorded. */
export class TransferGasEstimates {
  constructor(
    private readonly wallets: SendingWallets,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
  ) {}

  async estimate(organizationId: string, masterWalletId: string, assets: TransferLine[]): Promise<GasEstimateView> {
    const wallet = await this.wallets.resolve(organizationId, { masterWalletId });
    const { chain: sending, lines } = await priceLines(this.chains, this.networks, wallet, assets);
    if (sending.family === 'solana') return this.estimateSolana(wallet.address, sending.solana, lines);
    const network = sending.network;
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

  /** On Solana: the network fees and the rent of each recipient's token account to create, in lamports (no gas limits: 0). */
  private async estimateSolana(from: string, network: SolanaNetwork, lines: PricedLine[]): Promise<GasEstimateView> {
    let lamports = 0n;
    for (const [i, l] of lines.entries()) {
      try {
        const estimate = await network.port.estimateTransfer(from, { to: l.recipient, asset: l.asset.isNative ? { kind: 'native' } : { kind: 'token', address: l.asset.address, decimals: l.asset.decimals }, amount: l.rawAmount });
        lamports += estimate.fee + estimate.accountCreation;
      } catch (e) {
        if (!(e instanceof TransferRefused)) throw e;
        throw new KeelError('INSUFFICIENT_FUNDS', `assets.${i}: the cluster refuses this transfer from ${from}: ${e.message}`, { fields: [{ field: `assets.${i}`, error: 'INVALID_FIELD' }] });
      }
    }
    const chain = await this.chains.getBlockchain(network.blockchainId);
    return {
      assets: lines.map((l) => ({ amount: formatScaled(l.rawAmount, l.asset.decimals), asset: l.asset, blockchain: chain, destinationAddress: l.recipient })),
      estimatedFee: { amount: formatScaled(lamports, 9), value: lamports.toString(), callGasLimit: '0', verificationGasLimi: '0' },
    };
  }
}
