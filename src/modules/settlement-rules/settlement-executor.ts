import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { ChainNetworks, ChainService, AssetView } from '../chains';
import { chainTransferById, heldByAml } from '../deposits';
import { readBalances } from '../../platform/chain-port/evm-chain';
import type { SendingWallet, SendingWallets } from '../wallets';
import { checkTransferPolicy, GAS_HEADROOM, GasPayerHeld, type TransferService, type GasTopUps, type SettlementContractGuard } from '../withdrawals';
import type { DestinationScreen, SwapService, PricedSwap } from '../swaps';
import { APPROVAL_GAS, shortfallBasisPoints } from '../swaps';
import { formatScaled } from '../../platform/decimal';
import { ShownFailure } from '../../platform/shown-reason';

/** The policy price of an asset (the prices module's, one no single organisation can set), or why there is none. */
export interface ReferencePricer {
  policyPrice(blockchain: string, asset: string): Promise<{ priceUsd: string | null; source: string; unavailableReason?: string }>;
}

const TOKEN_SEND_GAS = 65_000n;
const NATIVE_SEND_GAS = 21_000n;

export type ExecutionPlan =
  | { kind: 'sweep' | 'swap'; transferId: string; transferItemId: string; swapId: string | null }
  | { cancelled: string }
  | { held: string };

/** A refusal that no retry can change (the destination screen, the wallet's policy, a bad rule). */
export class PermanentFailure extends ShownFailure {}

/**
 * Prepares one execution inside the worker's transaction: holds it while its address, or the master
 * wallet that would pay its gas, is held by AML, checks the destination (the screen, not Keel's settlement contract, and the wallet's security configuration), then queues a
 * sweep (the deposit's asset is the destination asset) or a swap on the chain's DEX straight to the
 * destination (it differs), with a gas top-up from the master wallet first when a deposit address
 * holds too little native coin.
 */
export class SettlementExecutor {
  constructor(
    private readonly wallets: SendingWallets,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
    private readonly transfers: TransferService,
    private readonly swaps: SwapService,
    private readonly screen: DestinationScreen,
    private readonly settlementContracts: SettlementContractGuard,
    private readonly gas: GasTopUps,
    private readonly references: ReferencePricer,
    /** How far a swap's output may fall short of its value at policy prices (SETTLEMENT_RULES_MAX_PRICE_DEVIATION_PERCENT). */
    private readonly maxShortfallBasisPoints: bigint,
  ) {}

  async prepare(trx: Knex.Transaction, execution: Record<string, any>): Promise<ExecutionPlan> {
    try {
      return await this.plan(trx, execution);
    } catch (e) {
      // The master wallet that would pay the address's gas is held by AML: held, as the address itself would be.
      if (e instanceof GasPayerHeld) return { held: e.message };
      throw e;
    }
  }

  private async plan(trx: Knex.Transaction, execution: Record<string, any>): Promise<ExecutionPlan> {
    const rule = await trx('settlement_rules').where({ id: execution.ruleId }).first();
    if (!rule || rule.deletedAt || !rule.isActive) return { cancelled: 'the rule was deactivated or deleted before it executed' };
    const deposit = await chainTransferById(trx, execution.chainTransferId);
    if (!deposit || deposit.status !== 'CONFIRMED') return { cancelled: 'the deposit was taken back by a chain reorganisation before the rule executed' };
    // A flagged deposit may have reached the address since this one triggered the rule: while no
    // admin has released it, nothing leaves the address automatically, as with auto-sweep.
    if (await heldByAml(trx, { masterWalletId: rule.masterWalletId, addressId: rule.addressId ?? null })) return { held: 'held: the address received a deposit from a sanctioned address, not released yet' };

    const wallet = await this.wallets.resolve(rule.organizationId, rule.addressId ? { addressId: rule.addressId } : { masterWalletId: rule.masterWalletId }, trx);
    const network = this.networks.get(deposit.blockchainId);
    if (!network) throw new PermanentFailure('the chain is no longer served by this deployment');
    const assets = await this.chains.assetViews([execution.assetId, rule.destinationAssetId], trx);
    const [from, to] = [assets.get(execution.assetId)!, assets.get(rule.destinationAssetId)!];
    const destination: string = rule.destinationAddress;

    const verdict = await this.screen.check(rule.organizationId, destination, network.blockchainId);
    if (!verdict.allowed) throw new PermanentFailure(`the destination is refused: ${verdict.reason}`);
    // A rule stored before Keel refused its destination on create and update: it fails here (VALIDATION_ERROR is permanent).
    await this.settlementContracts.check(network.blockchainId, destination, 'destination.address');
    const status = wallet.configurations.security.requireApprovalForTransfers ? 'PENDING_APPROVAL' : 'QUEUED';
    const swap = from.id !== to.id;
    const fees = await network.provider.getFeeData();
    const gasPrice = (fees.maxFeePerGas ?? fees.gasPrice ?? 0n) * GAS_HEADROOM;

    let amount = BigInt(execution.rawAmount);
    if (from.isNative) {
      // The native coin pays for its own send: what is left after gas, never more than the deposit.
      const gas = (swap ? 200_000n : NATIVE_SEND_GAS) * gasPrice;
      const [balance] = await readBalances(network.provider, wallet.address, [from]);
      const free = balance - (await this.transfers.inFlight(trx, wallet.address, network.blockchainId, from.id)) - gas;
      if (free < amount) amount = free;
      if (amount <= 0n) throw new KeelError('INSUFFICIENT_FUNDS', `${wallet.address} cannot pay the gas of this settlement out of the deposit`);
    }
    policy(wallet, from, destination, amount);

    if (!swap) {
      const after = from.isNative ? null : await this.gas.ensure(trx, wallet, network, TOKEN_SEND_GAS * gasPrice, { status });
      const { transferId, itemIds } = await this.transfers.enqueue(trx, wallet, network.blockchainId, 'sweep', [{ asset: from, recipient: destination, rawAmount: amount, afterItemId: after ?? undefined }], status);
      return { kind: 'sweep', transferId, transferItemId: itemIds[itemIds.length - 1], swapId: null };
    }
    const priced = await this.swaps.priceRaw(from, to, amount, rule.orderType, String(rule.slippageTolerance), trx);
    await this.swaps.admit(wallet, priced, destination);
    await this.checkReference(priced);
    const after = from.isNative ? null : await this.gas.ensure(trx, wallet, network, (priced.route.gasLimit + APPROVAL_GAS) * gasPrice, { status });
    const queued = await this.swaps.enqueue(trx, wallet, priced, destination, status, { afterItemId: after ?? undefined });
    return { kind: 'swap', transferId: queued.transferId, transferItemId: queued.swapItemId, swapId: queued.swapId };
  }

  /**
   * A third party's deposit triggers the swap, so whoever moved the pool just before could be
   * paid by it: the pool's output is checked against policy prices first. Off by more than the
   * allowed shortfall, or with no trustworthy price, the attempt fails (retried with backoff:
   * pools are arbitraged back and prices reappear) and nothing is traded.
   */
  private async checkReference(priced: PricedSwap): Promise<void> {
    const { from, to, amountIn, route } = priced;
    const [pin, pout] = await Promise.all([this.references.policyPrice(from.blockchainId, from.id), this.references.policyPrice(to.blockchainId, to.id)]);
    for (const [asset, price] of [[from, pin], [to, pout]] as const) {
      if (price.priceUsd === null) throw new ShownFailure(`not traded: no reference price to check the pool against (${price.unavailableReason ?? `no trustworthy USD price for ${asset.symbol}`})`);
    }
    const shortfall = shortfallBasisPoints({ raw: amountIn, decimals: from.decimals, priceUsd: pin.priceUsd! }, { raw: route.output, decimals: to.decimals, priceUsd: pout.priceUsd! });
    if (shortfall > this.maxShortfallBasisPoints) {
      throw new ShownFailure(
        `not traded: the pool is off the reference price: ${formatScaled(amountIn, from.decimals)} ${from.symbol} would give ${formatScaled(route.output, to.decimals)} ${to.symbol}, ` +
          `${formatScaled(shortfall, 2)}% less than at reference prices (${from.symbol} ${pin.priceUsd} USD, ${pin.source}; ${to.symbol} ${pout.priceUsd} USD, ${pout.source}); at most ${formatScaled(this.maxShortfallBasisPoints, 2)}% is allowed`,
      );
    }
  }
}

/** The wallet's security configuration, as for any transfer: allowed recipients and maxTransferAmount. */
function policy(wallet: SendingWallet, asset: AssetView, destination: string, amount: bigint): void {
  try {
    checkTransferPolicy(wallet.configurations.security, [{ asset, recipient: destination, rawAmount: amount }]);
  } catch (e) {
    throw new PermanentFailure(`the wallet's security configuration refuses it: ${(e as Error).message}`);
  }
}
