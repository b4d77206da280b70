import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { Logger } from '../../platform/logger';
import type { Failpoints } from '../../platform/failpoints';
import type { Outbox } from '../../platform/events/outbox';
import type { LedgerService } from '../ledger/ledger.service';
import type { SendingWallets } from '../wallets/sending-wallets';
import { Fence, fencedTransaction } from './chain-lease';
import type { SettlementDeployment } from './settlement-deployments';
import { isDefinitiveRefusal, NATIVE_TOKEN, revertReason, signWithdrawal, withdrawCalldata } from './settlement-contract';
import { TRADING_TRANSFER_EVENT } from './trading.domain';
import { eventData } from './trading.service';

/** Withdrawals paid out per step, each its own operator transaction. */
const PER_STEP = 20;

type Row = Record<string, any>;

/**
 * Pays out withdrawals from trading (their amount already taken from the trading ledger): the
 * wallet's key signs the withdrawal (EIP-712: the contract pays only what the account signed, each
 * id once) and the operator submits it, so a wallet needs no coin for gas. Runs in the chain's
 * settlement step, under its lease: the operator's transactions are signed one at a time.
 *
 * PENDING → (signed, recorded with its nonce and bytes before the broadcast) SUBMITTED → CONFIRMED
 * as deep as the chain's confirmation count (to the wallet's own address: credited to its custody
 * account), or FAILED when the contract refuses it (given back to the trading balance). A
 * transaction the node lost is sent again; one whose nonce another operator transaction took is
 * signed again (the contract's withdrawn ids make a second payout impossible).
 */
export class TradingWithdrawalSender {
  constructor(
    private readonly db: Knex,
    private readonly wallets: SendingWallets,
    private readonly ledger: LedgerService,
    private readonly outbox: Outbox,
    private readonly failpoints: Failpoints,
    private readonly logger: Logger,
  ) {}

  async step(d: SettlementDeployment, lease: Fence): Promise<void> {
    for (const w of await this.rows(d, 'SUBMITTED')) await this.follow(d, w, lease);
    for (const w of await this.rows(d, 'PENDING')) await this.submit(d, w, lease);
  }

  private rows(d: SettlementDeployment, status: string): Promise<Row[]> {
    return this.db('tradingTransfers').where({ blockchainId: d.network.blockchainId, direction: 'WITHDRAWAL', status }).orderBy([{ column: 'createdAt' }, { column: 'id' }]).limit(PER_STEP);
  }

  private async submit(d: SettlementDeployment, w: Row, lease: Fence): Promise<void> {
    const provider = d.network.provider;
    const asset = await this.db('assets').where({ id: w.assetId }).first('address', 'isNative');
    const withdrawal = { id: w.id, account: ethers.getAddress(w.walletAddress), token: asset.isNative ? NATIVE_TOKEN : ethers.getAddress(asset.address), amount: BigInt(w.rawAmount), to: ethers.getAddress(w.recipient) };
    const key = await this.wallets.signer(w.organizationId, w.masterWalletId, w.addressId, provider);
    const data = withdrawCalldata([{ withdrawal, signature: await signWithdrawal(key, d.address, d.network.spec.chainId, withdrawal) }]);
    let gas: bigint;
    try {
      gas = await provider.estimateGas({ from: d.operator.address, to: d.address, data });
    } catch (e) {
      if (!isDefinitiveRefusal(e)) throw e;
      return this.fail(w, revertReason(e), lease);
    }
    const fees = await provider.getFeeData();
    const nonce = await provider.getTransactionCount(d.operator.address, 'pending');
    const signed = ethers.Transaction.from(
      await d.operator.signTransaction({ type: 2, chainId: d.network.spec.chainId, nonce, to: d.address, data, gasLimit: (gas * 12n) / 10n + 10_000n, maxFeePerGas: fees.maxFeePerGas!, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! }),
    );
    // Recorded before it is broadcast: every hash that might be mined is known.
    const moved = await this.move(w, 'PENDING', 'SUBMITTED', lease, { fromAddress: d.operator.address, nonce, txHash: signed.hash, rawTx: signed.serialized, submittedAt: this.db.fn.now() });
    if (!moved) return;
    this.failpoints.hit('after-commit:settlement.withdrawal-signed');
    await lease.renew();
    await provider.broadcastTransaction(signed.serialized).catch((e) => this.logger.warn({ withdrawalId: w.id, err: revertReason(e) }, 'trading withdrawal broadcast failed; will retry'));
  }

  private async follow(d: SettlementDeployment, w: Row, lease: Fence): Promise<void> {
    const provider = d.network.provider;
    const receipt = await provider.getTransactionReceipt(w.txHash);
    if (!receipt) {
      if ((await provider.getTransactionCount(w.fromAddress, 'latest')) > Number(w.nonce)) {
        // Its nonce went to another operator transaction: signed again (paid out at most once, by its id).
        await this.move(w, 'SUBMITTED', 'PENDING', lease, { txHash: null, rawTx: null, nonce: null });
        return;
      }
      if (!(await provider.getTransaction(w.txHash))) await provider.broadcastTransaction(w.rawTx).catch((e) => this.logger.warn({ withdrawalId: w.id, err: revertReason(e) }, 'trading withdrawal re-broadcast failed; will retry'));
      return;
    }
    if (receipt.status !== 1) return this.fail(w, 'the withdrawal transaction reverted on chain', lease, { blockNumber: receipt.blockNumber, blockHash: receipt.blockHash });
    if ((await provider.getBlockNumber()) - receipt.blockNumber + 1 < d.network.spec.confirmations) return;
    const ownAddress = w.recipient.toLowerCase() === w.walletAddress.toLowerCase();
    await this.move(w, 'SUBMITTED', 'CONFIRMED', lease, { blockNumber: receipt.blockNumber, blockHash: receipt.blockHash }, async (trx) => {
      // Back at the wallet's address: its custody account holds it again (the deposit watcher does not credit the contract's payouts).
      if (ownAddress) await this.ledger.credit(trx, { organizationId: w.organizationId, walletId: w.walletId, assetId: w.assetId, amount: BigInt(w.rawAmount), reference: `trading-withdrawal:${w.id}`, account: 'custody' });
    });
  }

  /** The contract refuses it: FAILED, and the amount back in the trading balance. */
  private async fail(w: Row, reason: string, lease: Fence, changes: Record<string, unknown> = {}): Promise<void> {
    const moved = await this.move(w, w.status, 'FAILED', lease, { ...changes, failureReason: reason.slice(0, 500) }, (trx) =>
      this.ledger.credit(trx, { organizationId: w.organizationId, walletId: w.walletId, assetId: w.assetId, amount: BigInt(w.rawAmount), reference: `trading-withdrawal-refund:${w.id}`, account: 'trading' }).then(() => undefined),
    );
    if (moved) this.logger.warn({ withdrawalId: w.id, reason }, 'trading withdrawal refused by the contract: given back to the trading balance');
  }

  /** A compare-and-set on the status read, under the lease, with its event (and `also` in the same transaction); false when another worker moved it first. */
  private move(w: Row, from: string, to: string, lease: Fence, changes: Record<string, unknown>, also?: (trx: Knex.Transaction) => Promise<void>): Promise<boolean> {
    return fencedTransaction(this.db, lease, async (trx) => {
      const [row] = await trx('tradingTransfers').where({ id: w.id, status: from }).update({ ...changes, status: to, updatedAt: trx.fn.now() }).returning('*');
      if (!row) return false;
      await also?.(trx);
      if (to !== 'PENDING') await this.outbox.publish(trx, { organizationId: w.organizationId, type: `${TRADING_TRANSFER_EVENT}.${to.toLowerCase()}`, data: eventData(row) });
      return true;
    });
  }
}
