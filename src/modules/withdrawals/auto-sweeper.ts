import { Knex } from 'knex';
import { toUnitsFloor } from '../../platform/decimal';
import type { Logger } from '../../platform/logger';
import type { Metrics } from '../../platform/metrics';
import type { AssetView, ChainNetworks, ChainService, SolanaNetwork } from '../chains';
import { RecipientRefused, TransferRefused, type FeeEstimate } from '../../platform/chain-port/chain-port';
import { sweepDestinationAllowed } from '../wallets';
import type { SendingWallet, SendingWallets } from '../wallets';
import type { DepositListener, ChainTransferModel } from '../deposits';
import { chainTransferById, heldByAml } from '../deposits';
import { TransferService } from './transfer.service';
import type { GasTopUps } from './gas-top-up';
import { GAS_HEADROOM, GasPayerHeld } from './transfer.domain';
import type { SettlementContractGuard } from './settlement-contract-guard';
import { chainAsset } from '../../platform/chain-port/chain-port';
import { sameAddress } from '../../platform/chain-port/addresses';
import type { SweepAttempt, SweepPurpose, SweepsDue } from './sweeps-due';
import type { SendingItem, TransferOutcomeListener } from './sending-item';
import { shownReason } from '../../platform/shown-reason';

/** A Solana sweep's fee budget when it cannot be estimated yet (the address holds no SOL to simulate it): 0.0001 SOL. */
const SOLANA_FEE_BUDGET = 100_000n;
/** The size of an SPL token account, whose rent a sweep pays when the destination has none yet. */
const TOKEN_ACCOUNT_SIZE = 165n;


const arranged = (transfer: { transferId: string }): SweepAttempt => ({ kind: 'arranged', transferId: transfer.transferId });
const NOTHING: SweepAttempt = { kind: 'nothing' };
const HELD: SweepAttempt = { kind: 'held', reason: 'held: the address received a deposit from a sanctioned address, not released yet' };

/**
 * configurations.autoSweep: when a confirmed deposit brings a deposit address's balance of an asset
 * to the threshold (in that asset's units), the whole balance is swept to destinationAddress or the
 * master wallet (only ever the wallet itself or one of its security.allowedRecipients). A token sweep first gets its gas from the master wallet when enableGaslessWithdraw
 * is on; without it, only an address already holding gas is swept. A sweep that cannot be arranged
 * then, is held by AML (the address, or the master wallet that would pay its gas), or whose
 * transfer fails, is due again later (sweeps-due.ts) and tried by the worker (retryDue).
 */
export class AutoSweeper implements DepositListener, TransferOutcomeListener {
  constructor(
    private readonly db: Knex,
    private readonly due: SweepsDue,
    private readonly metrics: Metrics,
    private readonly wallets: SendingWallets,
    private readonly chains: ChainService,
    private readonly networks: ChainNetworks,
    private readonly transfers: TransferService,
    private readonly gas: GasTopUps,
    private readonly settlementContracts: SettlementContractGuard,
    private readonly logger: Logger,
  ) {}

  async confirmed(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void> {
    // Internal moves (a gas top-up from the master wallet among them) are Keel's own doing, not deposits to sweep.
    // A deposit from a sanctioned address (flagged by the AML screen before this runs) is held: due again once released.
    const candidates = deposits.filter((d) => d.addressId && d.direction === 'incoming' && d.category !== 'internal');
    if (!candidates.length) return;
    const sweeping = await this.wallets.withAutoSweep([...new Set(candidates.map((d) => d.masterWalletId))], trx);
    for (const deposit of candidates) if (sweeping.has(deposit.masterWalletId)) await this.attempt(trx, deposit, 'auto_sweep', false);
  }

  /**
   * Sweeps a deposit address's whole balance of the deposit's asset to its master wallet whatever
   * the wallet's autoSweep says, with gas from the master wallet when the address has none: a
   * checkout address (payment links and intents) settles this way. Never stops the caller's
   * transaction: a sweep that cannot be arranged is due again later (sweeps-due.ts).
   */
  async sweepToMaster(trx: Knex.Transaction, deposit: ChainTransferModel): Promise<void> {
    await this.attempt(trx, deposit, 'checkout_settlement', false);
  }

  /** A sweep's transfer confirmed (in the sender's step): the sweep is done. */
  async executed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    if (item.kind === 'sweep') await this.due.transferFinished(trx, item.transferId, null);
  }

  /** A sweep's transfer failed (in the sender's step): the funds are still at the address, so the sweep is due again. */
  async failed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    if (item.kind !== 'sweep') return;
    const key = await this.due.transferFinished(trx, item.transferId, `the sweep's transfer failed: ${item.error ?? 'no reason given'}`);
    if (key) this.logger.warn({ addressId: key.addressId, purpose: key.purpose, transferId: item.transferId }, "sweep's transfer failed: due again later");
  }

  /** Tries the sweeps due again whose time has come, each in a transaction of its own; how many it tried. */
  async retryDue(limit = 20): Promise<number> {
    let tried = 0;
    while (tried < limit) {
      const found = await this.db.transaction(async (trx) => {
        const due = await this.due.claim(trx);
        if (!due) return false;
        const deposit = await chainTransferById(trx, due.depositId);
        // The deposit is gone (rewound by a reorg): the address is swept on its next one.
        if (!deposit) await this.due.settle(trx, due, due.depositId, { kind: 'nothing' });
        else await this.attempt(trx, deposit, due.purpose, true);
        return true;
      });
      if (!found) break;
      tried++;
    }
    return tried;
  }

  /**
   * One attempt at the sweep of a deposit's address and asset, in a savepoint of the caller's
   * transaction (a sweep that cannot be arranged must never stop a deposit from being recorded);
   * what it came to is kept in sweeps_due, in the caller's transaction.
   */
  private async attempt(trx: Knex.Transaction, deposit: ChainTransferModel, purpose: SweepPurpose, retry: boolean): Promise<void> {
    const outcome: SweepAttempt = await trx
      .transaction((sp) => (purpose === 'auto_sweep' ? this.sweepAfter(sp, deposit) : this.sweepToSettlement(sp, deposit)))
      .catch((e) => {
        // The master wallet that would pay the gas is held by AML: the sweep is held with it, not failed.
        if (e instanceof GasPayerHeld) return { kind: 'held' as const, reason: e.message };
        this.logger.warn({ addressId: deposit.addressId, purpose, err: e }, 'sweep not arranged: due again later');
        return { kind: 'failed' as const, reason: shownReason(e) };
      });
    this.metrics.sweepAttempts.inc({ purpose, outcome: outcome.kind });
    if (outcome.kind === 'held' && !retry) this.logger.warn({ addressId: deposit.addressId, purpose, reason: outcome.reason }, 'sweep held by AML');
    else if (outcome.kind === 'arranged' && retry) this.logger.info({ addressId: deposit.addressId, purpose }, 'sweep due again arranged');
    await this.due.settle(trx, { addressId: deposit.addressId!, assetId: deposit.assetId, purpose }, deposit.id, outcome);
  }

  private async sweepToSettlement(trx: Knex.Transaction, deposit: ChainTransferModel): Promise<SweepAttempt> {
    // A retired checkout address (or one deactivated by hand) is still swept: what reached it is the wallet's.
    const source = await this.wallets.resolve(deposit.organizationId, { addressId: deposit.addressId! }, trx, { deactivated: 'allowed' });
    return this.sweep(trx, deposit, source, source.masterWalletAddress, 0n, true);
  }

  /** Sweeps the address of one deposit if its balance (less what is already leaving) reached the threshold. */
  private async sweepAfter(trx: Knex.Transaction, deposit: ChainTransferModel): Promise<SweepAttempt> {
    const source = await this.wallets.resolve(deposit.organizationId, { addressId: deposit.addressId! }, trx, { deactivated: 'allowed' }).catch(() => null);
    const sweep = source?.configurations.autoSweep;
    if (!source || !sweep?.enabled) return NOTHING;
    // Checked when set, and again here: security.allowedRecipients may have changed since.
    if (!sweepDestinationAllowed(source.configurations, source.masterWalletAddress)) {
      this.logger.warn({ addressId: source.addressId }, 'auto-sweep skipped: the destination is neither the wallet nor one of its allowed recipients');
      return NOTHING;
    }
    const destination = sweep.destinationAddress || source.masterWalletAddress;
    // Refused when set too (the wallets' SettlementContractCheck); checked again here: a contract deployed on the chain since
    // (`keel settlement deploy`, or the new one of `keel settlement migrate`) can be the destination a configuration already held.
    if (await this.settlementContracts.refuses(deposit.blockchainId, destination)) {
      this.logger.warn({ addressId: source.addressId }, "auto-sweep skipped: the destination is Keel's settlement contract, which credits no one what is sent to it");
      return NOTHING;
    }
    const asset = (await this.chains.assetViews([deposit.assetId], trx)).get(deposit.assetId);
    if (!this.networks.port(deposit.blockchainId) || !asset) return NOTHING;
    return this.sweep(trx, deposit, source, destination, toUnitsFloor(sweep.threshold || '0', asset.decimals), source.configurations.enableGaslessWithdraw);
  }

  /** Sends the address's available balance of the deposit's asset to `destination` once it reaches `threshold`. */
  private async sweep(trx: Knex.Transaction, deposit: ChainTransferModel, source: SendingWallet, destination: string, threshold: bigint, gasFromMaster: boolean): Promise<SweepAttempt> {
    // The collecting address itself (a wallet sweeping its addresses into one of them): nothing to move,
    // and on Solana a transfer to itself would leave the ledger short of what it "sent".
    if (sameAddress(destination, source.address)) return NOTHING;
    // The whole balance is swept: while the address holds a flagged deposit not released by an admin,
    // nothing leaves it automatically, whoever asks (the wallet's autoSweep or a checkout's settlement).
    if ((deposit.amlFlaggedAt && !deposit.amlReleasedAt) || (await heldByAml(trx, deposit))) return HELD;
    const asset = (await this.chains.assetViews([deposit.assetId], trx)).get(deposit.assetId);
    // The families' sweeps differ in shape: Solana's must leave an account empty or rent-exempt and may create the destination's token account.
    const solana = this.networks.solana(deposit.blockchainId);
    if (solana && asset) return this.sweepSolana(trx, deposit, source, solana, asset, destination, threshold, gasFromMaster);
    const network = this.networks.get(deposit.blockchainId);
    if (!network || !asset) return NOTHING;

    const balance = await network.port.balance(source.address, chainAsset(asset));
    const inFlight = await this.transfers.inFlight(trx, source.address, deposit.blockchainId, asset.id);
    // Never more than the ledger can give: what is locked in open orders stays.
    const spendable = await this.transfers.spendable(trx, deposit.addressId!, asset.id);
    const onChain = balance - inFlight;
    const available = onChain < spendable ? onChain : spendable;
    if (available <= 0n || available < threshold) return NOTHING;

    // A refusal (the token's contract reverts the transfer) is tried again later, as a node that did not answer is.
    const estimate = await network.port.estimateTransfer(source.address, { to: destination, asset: chainAsset(asset), amount: available });
    const gasCost = estimate.fee * GAS_HEADROOM;

    if (asset.isNative) {
      if (available <= gasCost) return NOTHING;
      return arranged(await this.transfers.enqueue(trx, source, deposit.blockchainId, 'sweep', [{ asset, recipient: destination, rawAmount: available - gasCost }]));
    }
    const afterItemId = (await this.gas.ensure(trx, source, network, gasCost, { fromMaster: gasFromMaster })) ?? undefined;
    return arranged(await this.transfers.enqueue(trx, source, deposit.blockchainId, 'sweep', [{ asset, recipient: destination, rawAmount: available, afterItemId }]));
  }

  /**
   * The Solana sweep (issue 35), through the cluster's chain port. SOL: the balance less the fee,
   * leaving the account empty (a System account may go to 0; anything left must stay rent-exempt, so a
   * sweep that would leave less is not made). A token: when the address holds too little SOL to pay
   * the fee (and the destination's token account rent, and stay rent-exempt itself), the master wallet
   * tops it up first and the sweep waits for that line to be finalized.
   */
  private async sweepSolana(trx: Knex.Transaction, deposit: ChainTransferModel, source: SendingWallet, network: SolanaNetwork, asset: AssetView, destination: string, threshold: bigint, gasFromMaster: boolean): Promise<SweepAttempt> {
    const port = network.port;
    // What the address can send: a token's sweep moves what its associated token account holds (a
    // deposit into another token account of the address is credited, and stays there).
    const balance = await port.sendable(source.address, chainAsset(asset));
    // What the ledger can give (it already counts every line on its way out), within the balance. A
    // sweep the cluster then refuses fails, refunded.
    const spendable = await this.transfers.spendable(trx, deposit.addressId!, asset.id);
    const available = balance < spendable ? balance : spendable;
    if (available <= 0n || available < threshold) return NOTHING;
    const rentExempt = await port.rpc.getMinimumBalanceForRentExemption(0n).send();
    if (asset.isNative) {
      // Estimated on half the amount: the whole of it plus the fee would exceed the balance in the simulation.
      const estimate = await port.estimateTransfer(source.address, { to: destination, asset: { kind: 'native' }, amount: available / 2n > 0n ? available / 2n : 1n });
      if (available <= estimate.fee) return NOTHING;
      const left = balance - available;
      if (left > 0n && left < rentExempt) return NOTHING;
      return arranged(await this.transfers.enqueue(trx, source, deposit.blockchainId, 'sweep', [{ asset, recipient: destination, rawAmount: available - estimate.fee }]));
    }
    let estimate: FeeEstimate | null;
    try {
      estimate = await port.estimateTransfer(source.address, { to: destination, asset: chainAsset(asset), amount: available });
    } catch (e) {
      if (!(e instanceof TransferRefused)) throw e;
      // A destination that cannot take the token (a token account of another mint, a mint): never swept there.
      if (e instanceof RecipientRefused) {
        this.logger.warn({ addressId: source.addressId, err: e }, 'auto-sweep skipped: the destination cannot receive this token');
        return NOTHING;
      }
      estimate = null;
    }
    // Without SOL the sweep cannot be simulated: a fee budget, and the rent of the destination's token account in case it has none.
    const accountCreation = estimate ? estimate.accountCreation : await port.rpc.getMinimumBalanceForRentExemption(TOKEN_ACCOUNT_SIZE).send();
    const fee = estimate ? estimate.fee * GAS_HEADROOM : SOLANA_FEE_BUDGET;
    const afterItemId = (await this.gas.ensure(trx, source, network, rentExempt + accountCreation + fee, { fromMaster: gasFromMaster })) ?? undefined;
    return arranged(await this.transfers.enqueue(trx, source, deposit.blockchainId, 'sweep', [{ asset, recipient: destination, rawAmount: available, afterItemId }]));
  }

  async reverted(): Promise<void> {
    // A sweep already sent stays sent; the reverted deposit is reported by its own event.
  }
}
