import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { Logger } from '../../platform/logger';
import type { Failpoints } from '../../platform/failpoints';
import type { Outbox } from '../../platform/events/outbox';
import { assetsById } from '../chains';
import type { CustodyLedgerSync, LedgerService } from '../ledger';
import { walletAtAddress, type SendingWallets } from '../wallets';
import { Fence, fencedTransaction } from './chain-lease';
import type { SettlementDeployment } from './settlement-deployments';
import { isDefinitiveRefusal, NATIVE_TOKEN, revertReason, signWithdrawal, withdrawCalldata } from './settlement-contract';
import { TRADING_TRANSFER_EVENT } from './trading.domain';
import { lineHashes, nonceFate } from '../../platform/chain-port/evm-transactions';
import { feeBumped, type FeeBumpOptions } from './fee-bump';
import { eventData } from './trading.service';
import { whereMined } from './where-mined';

/** Withdrawals paid out per step, in one operator transaction (and payout transactions followed per step), unless told. */
const PER_STEP = 50;

type Row = Record<string, any>;

/** The ledger reference of a failed payout's refund to the trading balance. */
const refundReference = (w: Row) => `trading-withdrawal-refund:${w.id}`;

/** Every transaction hash signed for the withdrawal's payout at its nonce, oldest first. */
function hashesOf(w: Row): string[] {
  return lineHashes({ fromAddress: w.fromAddress ?? '', nonce: w.nonce, txHash: w.txHash, replacedTxHashes: w.replacedTxHashes ?? [] });
}

/** The Keel wallet a withdrawal from trading (its row) pays out to, if any: the wallet's own address, or any other of any organisation. */
export async function payoutHolder(db: Knex | Knex.Transaction, w: Row): Promise<{ organizationId: string; walletId: string } | undefined> {
  if (w.recipient.toLowerCase() === w.walletAddress.toLowerCase()) return { organizationId: w.organizationId, walletId: w.walletId };
  return (await walletAtAddress(db, w.blockchainId, w.recipient)) ?? undefined;
}

export interface TradingWithdrawalOptions extends FeeBumpOptions {
  /** How far back CONFIRMED payouts (and FAILED ones whose transaction reverted on chain) are looked at again for a reorg deeper than the confirmation count. */
  reorgWindowBlocks: number;
  /** Withdrawals paid out per step, and payout transactions followed per step (PER_STEP unless told). */
  perStep?: number;
}

/** Another worker moved one of the rows first: the whole change is rolled back. */
class MovedElsewhere extends Error {}

/**
 * Pays out withdrawals from trading (their amount already taken from the trading ledger): the
 * wallet's key signs the withdrawal (EIP-712: the contract pays only what the account signed, each
 * key once) and the operator submits it, so a wallet needs no coin for gas. Runs in the chain's
 * settlement step, under its lease: the withdrawals waiting go out together in one operator
 * transaction (one base cost for all); when the contract would refuse that transaction, each is
 * tried alone, so the one it refuses is FAILED and the others go out. A withdrawal to an address
 * with code goes alone (a contract may accept when estimated and refuse when mined); when a
 * transaction of several reverts on chain nonetheless, nothing was paid and none is given back:
 * each is PENDING again and sent alone, and only a transaction of one that reverts fails it.
 *
 * PENDING → (signed, recorded with its nonce and bytes before the broadcast) SUBMITTED → CONFIRMED
 * as deep as the chain's confirmation count (to a Keel wallet's address: credited to its custody
 * account), or FAILED when the contract refuses it (given back to the trading balance). A
 * transaction the node lost is sent again; one stuck below the market fee is signed again at its
 * nonce with a higher fee, as a settlement batch is (feeBumped: every hash it had is kept, and
 * whichever is mined is followed as its own); one whose nonce another operator transaction took is
 * signed again (the contract's bitmap of paid keys makes a second payout impossible). A CONFIRMED
 * payout whose block a reorg deeper than the confirmation count took off the chain is SUBMITTED
 * again (checkReorgs), its custody credit taken back, and followed from there; so is a payout
 * FAILED because its transaction reverted on chain, its refund to trading taken back (mined again
 * on the new chain, the same signed transaction may pay it out).
 */
export class TradingWithdrawalSender {
  /** Per chain, the head whose confirmed payouts were last checked for a reorg: unchanged, nothing to look at. */
  private readonly checkedHeads = new Map<string, string>();

  constructor(
    private readonly db: Knex,
    private readonly wallets: SendingWallets,
    private readonly ledger: LedgerService,
    private readonly custody: CustodyLedgerSync,
    private readonly outbox: Outbox,
    private readonly failpoints: Failpoints,
    private readonly logger: Logger,
    private readonly options: TradingWithdrawalOptions,
  ) {}

  async step(d: SettlementDeployment, lease: Fence): Promise<void> {
    for (const rows of await this.submittedTransactions(d)) await this.follow(d, rows, lease);
    const together: Row[] = [];
    for (const w of await this.ofChain(d, 'PENDING').orderBy([{ column: 'createdAt' }, { column: 'id' }]).limit(this.perStep)) {
      // A recipient with code may take the coin when the transaction is estimated and refuse it when
      // it is mined, reverting every payout sent with it: it goes on its own, as does a withdrawal
      // whose transaction with others reverted already.
      if (w.sendAlone || (await d.network.provider.getCode(w.recipient)) !== '0x') await this.submit(d, [w], lease);
      else together.push(w);
    }
    if (together.length) await this.submit(d, together, lease);
  }

  private get perStep(): number {
    return this.options.perStep ?? PER_STEP;
  }

  private ofChain(d: SettlementDeployment, status: string): Knex.QueryBuilder {
    return this.db('tradingTransfers').where({ blockchainId: d.network.blockchainId, direction: 'WITHDRAWAL', status });
  }

  /**
   * The oldest SUBMITTED payout transactions, each with every one of its withdrawals: a transaction
   * is followed whole (cut short, a reverted one of several would be taken for a transaction of one,
   * FAILED and refunded rather than sent again alone).
   */
  private async submittedTransactions(d: SettlementDeployment): Promise<Row[][]> {
    const oldest = this.ofChain(d, 'SUBMITTED').groupBy('txHash').select('txHash').orderByRaw('min(created_at), min(id::text)').limit(this.perStep);
    const byTx = new Map<string, Row[]>();
    for (const w of await this.ofChain(d, 'SUBMITTED').whereIn('txHash', oldest).orderBy([{ column: 'createdAt' }, { column: 'id' }])) byTx.set(w.txHash, [...(byTx.get(w.txHash) ?? []), w]);
    return [...byTx.values()];
  }

  private async submit(d: SettlementDeployment, rows: Row[], lease: Fence): Promise<void> {
    const provider = d.network.provider;
    const signed = [];
    for (const w of rows) {
      const [asset] = await assetsById(this.db, [w.assetId]);
      const withdrawal = { key: BigInt(w.withdrawalKey), account: ethers.getAddress(w.walletAddress), token: asset.isNative ? NATIVE_TOKEN : ethers.getAddress(asset.address), amount: BigInt(w.rawAmount), to: ethers.getAddress(w.recipient) };
      const key = await this.wallets.signer(w.organizationId, w.masterWalletId, w.addressId, provider);
      signed.push({ withdrawal, signature: await signWithdrawal(key, d.address, d.network.spec.chainId, withdrawal) });
    }
    const data = withdrawCalldata(signed);
    let gas: bigint;
    try {
      gas = await provider.estimateGas({ from: d.operator.address, to: d.address, data });
    } catch (e) {
      if (!isDefinitiveRefusal(e)) throw e;
      if (rows.length === 1) {
        const reason = revertReason(e);
        // Its key was paid out by a transaction Keel no longer follows: giving it back would pay it twice. It waits for the operator.
        if (reason.startsWith('AlreadyWithdrawn(')) {
          // Most often another worker paid it since this one read it (its row has moved on): nothing to do.
          const still = await this.db('tradingTransfers').where({ id: rows[0].id, status: 'PENDING' }).first('id');
          if (still) this.logger.error({ withdrawalId: rows[0].id, reason }, 'trading withdrawal already paid out on chain by an earlier transaction: left PENDING, not refunded');
          return;
        }
        return this.fail(rows[0], reason, lease);
      }
      for (const w of rows) await this.submit(d, [w], lease);
      return;
    }
    const fees = await provider.getFeeData();
    const nonce = await provider.getTransactionCount(d.operator.address, 'pending');
    const tx = ethers.Transaction.from(
      await d.operator.signTransaction({ type: 2, chainId: d.network.spec.chainId, nonce, to: d.address, data, gasLimit: (gas * 12n) / 10n + 10_000n, maxFeePerGas: fees.maxFeePerGas!, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! }),
    );
    // Recorded before it is broadcast: every hash that might be mined is known.
    const moved = await this.move(rows, 'PENDING', 'SUBMITTED', lease, { fromAddress: d.operator.address, nonce, txHash: tx.hash, rawTx: tx.serialized, submittedAt: this.db.fn.now() });
    if (!moved) return;
    this.failpoints.hit('after-commit:settlement.withdrawal-signed');
    await lease.renew();
    await provider.broadcastTransaction(tx.serialized).catch((e) => this.logger.warn({ withdrawalIds: rows.map((w) => w.id), err: e }, 'trading withdrawal broadcast failed; will retry'));
  }

  /** Withdrawals sent in one transaction, followed together. */
  private async follow(d: SettlementDeployment, rows: Row[], lease: Fence): Promise<void> {
    const provider = d.network.provider;
    const [w] = rows;
    // Its nonce is judged at the final block, and "taken" only once the transaction that used it is seen to be another.
    // Any of the hashes signed at its nonce may be the one mined: each is its own, never "taken".
    const fate = await nonceFate(provider, d.network.spec.confirmations, { fromAddress: w.fromAddress, nonce: w.nonce, txHash: w.txHash, replacedTxHashes: w.replacedTxHashes ?? [] });
    if (fate.kind === 'taken') {
      // Its nonce went to another operator transaction for good: signed again (paid out at most once, by its key).
      await this.move(rows, 'SUBMITTED', 'PENDING', lease, { txHash: null, rawTx: null, nonce: null, replacedTxHashes: [] });
      return;
    }
    if (fate.kind === 'undecided') return void this.logger.warn({ withdrawalIds: rows.map((r) => r.id), reason: fate.reason }, 'trading withdrawal: its nonce is used, by which transaction the node does not show yet; it waits');
    if (fate.kind === 'open') {
      // Its latest bytes (the hash recorded may be an earlier one's, mined before a reorg took it off).
      if (!(await provider.getTransaction(ethers.keccak256(w.rawTx)))) {
        await lease.renew();
        await provider.broadcastTransaction(w.rawTx).catch((e) => this.logger.warn({ withdrawalIds: rows.map((r) => r.id), err: e }, 'trading withdrawal re-broadcast failed; will retry'));
        return;
      }
      // Waiting under a fee the market left behind, it would hold every later operator transaction (the batches too) behind its nonce.
      const signed = await feeBumped(d, w as { rawTx: string; submittedAt: Date }, this.options);
      if (signed) await this.replace(d, rows, signed, lease);
      return;
    }
    const receipt = fate.receipt;
    // Acted on only as deep as the confirmation count, reverted or not: a reorganisation may mine the
    // same signed transaction in another block, where it may go the other way.
    if ((await provider.getBlockNumber()) - receipt.blockNumber + 1 < d.network.spec.confirmations) return;
    const mined = { txHash: receipt.hash, replacedTxHashes: hashesOf(w).filter((h) => h !== receipt.hash), blockNumber: receipt.blockNumber, blockHash: receipt.blockHash };
    if (receipt.status !== 1) {
      if (rows.length > 1) {
        // A reverted transaction paid none of them (the contract's bitmap of paid keys reverted with
        // it), and one of them alone may have made it revert: none is given back; each is sent
        // again on its own, so only the one whose own transaction reverts fails.
        const moved = await this.move(rows, 'SUBMITTED', 'PENDING', lease, { txHash: null, rawTx: null, nonce: null, replacedTxHashes: [], sendAlone: true });
        if (moved) this.logger.warn({ withdrawalIds: rows.map((r) => r.id), txHash: receipt.hash }, 'trading withdrawals: their transaction reverted on chain; each is sent again on its own');
        return;
      }
      await this.fail(w, 'the withdrawal transaction reverted on chain', lease, mined);
      // As for a confirmed one: a head checked before it failed in its block says nothing of it.
      this.checkedHeads.delete(d.network.blockchainId);
      return;
    }
    const confirmed = await this.move(rows, 'SUBMITTED', 'CONFIRMED', lease, mined, async (trx, r) => {
      // Paid to a Keel wallet (the wallet's own address, or any other of any organisation): its custody
      // account holds it now. The deposit watcher credits none of the contract's payouts (and sees no
      // coin paid by the contract's internal call), so this is the one credit (once per mining: a
      // payout a deep reorg took back and that is mined again is credited again).
      const holder = await payoutHolder(trx, r);
      if (holder) await this.custody.creditFromChain(trx, { ...holder, assetId: r.assetId, amount: BigInt(r.rawAmount), reference: `trading-withdrawal:${r.id}` });
    });
    // A head checked before this payout was confirmed says nothing of it: a chain rewound to that very head must be checked again.
    if (confirmed) this.checkedHeads.delete(d.network.blockchainId);
  }

  /**
   * CONFIRMED payouts within the reorg window whose transaction is no longer in the block they were
   * confirmed in (a reorg deeper than the confirmation count; as for batches and deposits to
   * trading, a node that has not reached that block is waited for, never taken for a reorg): the
   * contract may not have paid them on this chain. Each goes back to SUBMITTED, its custody credit
   * taken back in the same transaction (what the recipient spent of it becoming a debt, as for a
   * reorged deposit), and its transaction is sent again; it is then followed as any payout is
   * (CONFIRMED again once as deep as the confirmation count, credited again). So is a payout FAILED
   * because its transaction reverted in a block the reorg took: mined again, the same signed
   * transaction may pay it out, so its refund to trading is taken back the same way (given back
   * again, `#2`, if it reverts again).
   */
  async checkReorgs(d: SettlementDeployment, lease: Fence): Promise<void> {
    const chain = d.network.blockchainId;
    // A block hash, not a height: a chain rewound and grown back to the same height has a new head.
    const latest = await d.network.provider.getBlock('latest');
    if (!latest || this.checkedHeads.get(chain) === latest.hash) return;
    const recent: Row[] = await this.db('tradingTransfers')
      .where({ blockchainId: chain, direction: 'WITHDRAWAL' })
      // A FAILED payout has a block only when its transaction reverted on chain (a refusal at estimation sent nothing).
      .whereIn('status', ['CONFIRMED', 'FAILED'])
      .where('blockNumber', '>', latest.number - this.options.reorgWindowBlocks)
      // Payouts confirmed before the contract was (re)deployed belong to a chain that was reset, not reorganised.
      .where('updatedAt', '>=', d.since)
      .orderBy([{ column: 'blockNumber', order: 'desc' }, { column: 'id' }]);
    const byTx = new Map<string, Row[]>();
    for (const w of recent) byTx.set(`${w.status}:${w.txHash}`, [...(byTx.get(`${w.status}:${w.txHash}`) ?? []), w]);
    for (const rows of byTx.values()) {
      const [w] = rows;
      const where = await whereMined(d.network.port, w.txHash, { blockNumber: Number(w.blockNumber), blockHash: w.blockHash });
      // Still there; or on a node behind, or between two chains: looked at again at the next head.
      if (where.kind === 'still' || where.kind === 'behind' || where.kind === 'unsettled') continue;
      const failed = w.status === 'FAILED';
      const moved = await this.move(rows, w.status, 'SUBMITTED', lease, { blockNumber: null, blockHash: null, failureReason: null, submittedAt: this.db.fn.now() }, async (trx, r) => {
        if (failed) {
          // Its refund to trading: what the wallet already spent or locked of it becomes a debt.
          await this.custody.takeBackFromChain(trx, { organizationId: r.organizationId, walletId: r.walletId, assetId: r.assetId, reference: refundReference(r) }, 'a refund of a reverted payout from trading a deep reorg took back was already spent or locked: debt recorded');
          return;
        }
        const holder = await payoutHolder(trx, r);
        if (holder) await this.custody.takeBackFromChain(trx, { ...holder, assetId: r.assetId, reference: `trading-withdrawal:${r.id}` }, 'a payout from trading a deep reorg took back was already spent or locked by its recipient: debt recorded');
      }, 'reorged');
      if (!moved) continue;
      this.logger.error(
        { blockchainId: chain, withdrawalIds: rows.map((r) => r.id), txHash: w.txHash, blockNumber: w.blockNumber, minedAgainIn: where.kind === 'moved' ? where.receipt.blockNumber : null },
        failed
          ? 'a payout of a withdrawal from trading that reverted on chain (FAILED, refunded) was taken off its block by a reorg deeper than the confirmation count: SUBMITTED again, its refund taken back, its transaction sent again'
          : 'a confirmed payout of withdrawals from trading was taken off its block by a reorg deeper than the confirmation count: SUBMITTED again, its custody credit taken back, its transaction sent again',
      );
      if (where.kind === 'gone') {
        await lease.renew();
        await d.network.provider.broadcastTransaction(w.rawTx).catch((e) => this.logger.warn({ withdrawalIds: rows.map((r) => r.id), err: e }, 'trading withdrawal re-broadcast after a reorg failed; will retry'));
      }
    }
    this.checkedHeads.set(chain, latest.hash!);
  }

  /** Takes the place of the payout's transaction in the pool (the same call at its nonce, a higher fee): recorded first, with every hash before it, then broadcast. */
  private async replace(d: SettlementDeployment, rows: Row[], signed: ethers.Transaction, lease: Fence): Promise<void> {
    const [w] = rows;
    const moved = await this.move(rows, 'SUBMITTED', 'SUBMITTED', lease, { txHash: signed.hash, rawTx: signed.serialized, replacedTxHashes: hashesOf(w), submittedAt: this.db.fn.now() });
    if (!moved) return;
    this.logger.info({ withdrawalIds: rows.map((r) => r.id), replaced: w.txHash, by: signed.hash }, 'trading withdrawal: fee bumped');
    await lease.renew();
    await d.network.provider.broadcastTransaction(signed.serialized).catch((e) => this.logger.warn({ withdrawalIds: rows.map((r) => r.id), err: e }, 'trading withdrawal fee bump broadcast failed; will retry'));
  }

  /**
   * The contract refuses it: FAILED, and the amount back in the trading balance (once per failure: a
   * refund a deep reorg took back is given again, `#2`, if its transaction reverts again).
   */
  private async fail(w: Row, reason: string, lease: Fence, changes: Record<string, unknown> = {}): Promise<void> {
    const moved = await this.move([w], w.status, 'FAILED', lease, { ...changes, failureReason: reason.slice(0, 500) }, (trx) =>
      this.custody.creditFromChain(trx, { organizationId: w.organizationId, walletId: w.walletId, assetId: w.assetId, amount: BigInt(w.rawAmount), reference: refundReference(w), account: 'trading' }),
    );
    if (moved) this.logger.warn({ withdrawalId: w.id, reason }, 'trading withdrawal refused by the contract: given back to the trading balance');
  }

  /**
   * A compare-and-set of every row's status from `from` (and of its transaction, as read), under the
   * lease, each with its event when its status changes (`trading_transfer.<event>`, the new status
   * unless told) (and `also` in the same transaction); false,
   * with nothing changed, when another worker moved one first.
   */
  private async move(rows: Row[], from: string, to: string, lease: Fence, changes: Record<string, unknown>, also?: (trx: Knex.Transaction, row: Row) => Promise<void>, event = to.toLowerCase()): Promise<boolean> {
    try {
      return await fencedTransaction(this.db, lease, async (trx) => {
        for (const w of rows) {
          const [row] = await trx('tradingTransfers').where({ id: w.id, status: from }).where(from === 'SUBMITTED' ? { txHash: w.txHash } : {}).update({ ...changes, status: to, updatedAt: trx.fn.now() }).returning('*');
          if (!row) throw new MovedElsewhere();
          await also?.(trx, row);
          if (to !== 'PENDING' && to !== from) await this.outbox.publish(trx, { organizationId: row.organizationId, type: `${TRADING_TRANSFER_EVENT}.${event}`, data: eventData(row) });
        }
        return true;
      });
    } catch (e) {
      if (e instanceof MovedElsewhere) return false;
      throw e;
    }
  }
}
