import { Knex } from 'knex';
import { ethers } from 'ethers';
import type { Logger } from '../../platform/logger';
import type { Failpoints } from '../../platform/failpoints';
import type { CustodyLedgerSync } from '../ledger/custody-ledger-sync';
import { broadcastLine } from '../withdrawals/broadcast';
import { nodeKnowsAny, nonceFate, SignedLine } from '../withdrawals/nonce-fate';
import { giveBackNonce, resyncAfterReorg, takeSenderNonce } from '../withdrawals/sender-nonces';
import { bumpedFees } from '../withdrawals/fee-bump';
import type { SettlementDeployment } from './settlement-deployments';
import { walletAccounts, WalletAccount } from './wallet-accounts';
import { Fence, fencedTransaction } from './chain-lease';
import { whereMined } from './where-mined';

/** The chain refused a funding transaction for good (or it reverted): the wallet is left short. */
export class FundingRefused extends Error {}

/** A funding transaction not mined within the step's bound: left open, followed again on later steps. */
export class FundingPending extends Error {}

/** A settlement_funding_txs row. */
interface FundingTx {
  txHash: string;
  batchId: string | null;
  blockchainId: string;
  organizationId: string;
  walletId: string;
  fromAddress: string;
  nonce: string;
  rawTx: string;
  status: 'SIGNED' | 'SUBMITTED' | 'MINED' | 'DROPPED';
  blockHash: string | null;
  /** Earlier signings of the same nonce with lower fees: any of them may be the one mined. */
  replacedTxHashes: string[];
  /** When the current signing was first sent (null on rows sent before it was recorded: updatedAt stands in). */
  sentAt: Date | null;
  updatedAt: Date;
}

/** When a funding transaction stuck below the market fee is signed again, and by how much its fees rise. */
export interface FundingFeeBump {
  afterMs: number;
  percent: number;
}

/** The signer of a wallet's funding transactions (its key derived only when one must be signed again). */
export type FundingSigner = (account: WalletAccount) => Promise<ethers.Signer>;

const OPEN = ['SIGNED', 'SUBMITTED'];
/** How long a step waits for a funding transaction it just sent; past it, the transaction stays open and later steps follow it. */
const WAIT_MS = 20_000;
const POLL_MS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const lineOf = (tx: FundingTx): SignedLine => ({ fromAddress: tx.fromAddress, nonce: tx.nonce, txHash: tx.txHash, replacedTxHashes: tx.replacedTxHashes ?? [] });
/** Per transaction and block: the same signed transaction mined again after a reorg pays its gas again. */
const gasReference = (txHash: string, blockHash: string) => `settlement-gas:${txHash}:${blockHash}`;

/**
 * The transactions a wallet sends to fund the settlement contract, crash-safe as transfer lines are:
 * each is signed under the address's sender nonce and recorded (SIGNED, with its raw bytes) in the
 * transaction that takes the nonce, and only then broadcast. Broadcasting is repeatable, so a crash
 * or a failed broadcast leaves bytes to send again, never a nonce gap that stalls the wallet's later
 * transactions. Its gas is charged once, with its receipt (MINED); a transaction that can never be
 * mined is DROPPED, and its nonce given back when nothing was signed after it. One stuck below the
 * market fee is signed again with the same nonce and a higher fee (recorded before it is sent).
 */
export class FundingTransactions {
  constructor(
    private readonly db: Knex,
    private readonly gas: CustodyLedgerSync,
    private readonly failpoints: Failpoints,
    private readonly logger: Logger,
    private readonly feeBump: FundingFeeBump,
  ) {}

  /**
   * Signs and records a funding transaction, then sends it and waits until it is mined. A wallet
   * whose coin cannot pay the transaction's most gas is refused before its key is derived or a
   * nonce taken: the chain would refuse the signed bytes anyway.
   */
  async send(d: SettlementDeployment, account: WalletAccount, signerOf: FundingSigner, request: { to: string; value: bigint; data: string }, batchId: string | null, lease: Fence): Promise<void> {
    const { network } = d;
    const [gas, fees, coin] = await Promise.all([network.provider.estimateGas({ from: account.address, ...request }), network.provider.getFeeData(), network.provider.getBalance(account.address)]);
    const gasLimit = (gas * 12n) / 10n;
    const mostCost = gasLimit * fees.maxFeePerGas! + request.value;
    if (coin < mostCost) throw new FundingRefused(`the wallet's address ${account.address} holds ${coin} wei of the chain's coin, short of the ${mostCost} wei this funding may cost`);
    const signer = await signerOf(account);
    const tx = await fencedTransaction(this.db, lease, async (trx) => {
      await resyncAfterReorg(trx, network.blockchainId, account.address, network.provider);
      const nonce = await takeSenderNonce(trx, network.blockchainId, account.address, network.provider);
      const signed = ethers.Transaction.from(
        await signer.signTransaction({ type: 2, chainId: network.spec.chainId, nonce, gasLimit, maxFeePerGas: fees.maxFeePerGas!, maxPriorityFeePerGas: fees.maxPriorityFeePerGas!, ...request }),
      );
      // Signed again byte for byte (a rewound chain, the same nonce and fees): the dropped record is that transaction, open again.
      const [row] = await trx('settlement_funding_txs')
        .insert({ txHash: signed.hash, batchId, blockchainId: network.blockchainId, organizationId: account.organizationId, walletId: account.walletId, fromAddress: account.address, nonce, rawTx: signed.serialized, status: 'SIGNED' })
        .onConflict('tx_hash')
        .merge({ batchId, status: 'SIGNED', blockHash: null, gasRefunded: false, failureReason: null, replacedTxHashes: [], sentAt: null, updatedAt: trx.fn.now() })
        .where('settlement_funding_txs.status', 'DROPPED')
        .returning('*');
      if (!row) throw new Error(`settlement funding ${signed.hash} is already recorded and open`);
      return row as FundingTx;
    });
    this.failpoints.hit('after-commit:settlement.funding-signed');
    if (!(await this.complete(d, tx, lease))) throw new FundingPending(`settlement funding ${tx.txHash} not mined within ${WAIT_MS} ms; followed on later steps`);
  }

  /**
   * Every funding transaction of the chain not yet mined or dropped, each advanced once without
   * waiting (sent again when the node lacks it, MINED or DROPPED when its fate is known): one that
   * is stuck holds back its own wallet's funding only, never the chain's step; one stuck below the
   * market fee past the bump delay is signed again by `signer` with a higher fee.
   */
  async followOpen(d: SettlementDeployment, lease: Fence, signer: FundingSigner): Promise<void> {
    for (const tx of await this.open(d.network.blockchainId)) {
      await this.advance(d, tx, lease, signer).catch((e) => {
        if (!(e instanceof FundingRefused)) throw e;
        this.logger.warn({ txHash: tx.txHash, walletId: tx.walletId, err: e.message }, 'settlement funding transaction will not be mined');
      });
    }
  }

  /** The wallets of the chain with a funding transaction still open: what it deposits is not known yet. */
  async walletsWithOpen(blockchainId: string): Promise<Set<string>> {
    return new Set((await this.open(blockchainId)).map((tx) => tx.walletId));
  }

  private open(blockchainId: string): Promise<FundingTx[]> {
    return this.db('settlement_funding_txs').where({ blockchainId }).whereIn('status', OPEN).orderBy([{ column: 'createdAt' }, { column: 'nonce' }]);
  }

  /** Followed until mined (true) or WAIT_MS passed (false, still open); FundingRefused when it never will be, or reverted. */
  private async complete(d: SettlementDeployment, tx: FundingTx, lease: Fence): Promise<boolean> {
    const deadline = Date.now() + WAIT_MS;
    while (await this.advance(d, tx, lease)) {
      if (Date.now() > deadline) return false;
      await sleep(POLL_MS);
      await lease.renew();
    }
    return true;
  }

  /** One look at the transaction: broadcast when the node lacks it, its fate recorded when known; true while it is still open. */
  private async advance(d: SettlementDeployment, tx: FundingTx, lease: Fence, signer?: FundingSigner): Promise<boolean> {
    const { provider, spec } = d.network;
    const line = lineOf(tx);
    const fate = await nonceFate(provider, spec.confirmations, line);
    if (fate.kind === 'mined') return this.mined(d, tx, fate.receipt, lease).then(() => false);
    if (fate.kind === 'taken') return this.drop(tx, lease, `nonce ${tx.nonce} was used by another transaction`);
    if (tx.status === 'SUBMITTED' && (await provider.getTransaction(tx.txHash))) {
      const waited = Date.now() - new Date(tx.sentAt ?? tx.updatedAt).getTime();
      if (signer && waited > this.feeBump.afterMs) await this.bump(d, tx, lease, signer);
      return true;
    }
    if (!(await this.broadcast(d, tx, lease))) return true;
    // A chain that mines at once (a dev chain) has it now: its wallet need not wait for another step.
    const after = await nonceFate(provider, spec.confirmations, line);
    return after.kind === 'mined' ? this.mined(d, tx, after.receipt, lease).then(() => false) : true;
  }

  /** Sent (again); false when the node could not be reached, to be tried next step. */
  private async broadcast(d: SettlementDeployment, tx: FundingTx, lease: Fence): Promise<boolean> {
    const { provider, spec } = d.network;
    const line = lineOf(tx);
    await lease.renew();
    const outcome = await broadcastLine(provider, spec.confirmations, line, tx.rawTx);
    if (outcome.kind === 'taken') return this.drop(tx, lease, `nonce ${tx.nonce} was used by another transaction`);
    if (outcome.kind === 'retry') {
      this.logger.warn({ txHash: tx.txHash, err: outcome.reason }, 'settlement funding broadcast failed; will retry');
      return false;
    }
    if (outcome.kind === 'refused' && !(await nodeKnowsAny(provider, line))) return this.refuse(tx, lease, outcome.reason);
    if (tx.status === 'SIGNED') {
      await fencedTransaction(this.db, lease, (trx) => trx('settlement_funding_txs').where({ txHash: tx.txHash, status: 'SIGNED' }).update({ status: 'SUBMITTED', sentAt: trx.fn.now(), updatedAt: trx.fn.now() }));
      tx.status = 'SUBMITTED';
    }
    return true;
  }

  /** Stuck below the market fee: signed again with the same nonce and higher fees, recorded, then sent. */
  private async bump(d: SettlementDeployment, tx: FundingTx, lease: Fence, signer: FundingSigner): Promise<void> {
    const old = ethers.Transaction.from(tx.rawTx);
    const bumped = await bumpedFees(d.network.provider, { maxFeePerGas: old.maxFeePerGas!, maxPriorityFeePerGas: old.maxPriorityFeePerGas! }, this.feeBump.percent);
    if (!bumped) return;
    const account = (await walletAccounts(this.db, [tx.walletId])).get(tx.walletId);
    if (!account) return;
    const signed = ethers.Transaction.from(
      await (await signer(account)).signTransaction({ type: 2, chainId: d.network.spec.chainId, nonce: old.nonce, to: old.to, value: old.value, data: old.data, gasLimit: old.gasLimit, ...bumped }),
    );
    const replacedTxHashes = [tx.txHash, ...(tx.replacedTxHashes ?? [])];
    const moved = await fencedTransaction(this.db, lease, (trx) =>
      trx('settlement_funding_txs').where({ txHash: tx.txHash, status: 'SUBMITTED' }).update({ txHash: signed.hash, rawTx: signed.serialized, replacedTxHashes, sentAt: trx.fn.now(), updatedAt: trx.fn.now() }),
    );
    if (!moved) return;
    this.logger.info({ walletId: tx.walletId, replaced: tx.txHash, by: signed.hash }, 'settlement funding fee bumped');
    Object.assign(tx, { txHash: signed.hash, rawTx: signed.serialized, replacedTxHashes });
    await lease.renew();
    await d.network.provider.broadcastTransaction(signed.serialized).catch((e) => this.logger.warn({ txHash: signed.hash, err: e instanceof Error ? e.message : String(e) }, 'settlement funding fee bump broadcast failed; will retry'));
  }

  /** MINED and its gas charged, once (compare-and-set on the status, in the charge's transaction). */
  private async mined(d: SettlementDeployment, tx: FundingTx, receipt: ethers.TransactionReceipt, lease: Fence): Promise<void> {
    // The row follows the signing that was mined (an earlier one, with a lower fee, may have been),
    // its bytes included: after a reorg they are what is sent again.
    const replacedTxHashes = [tx.txHash, ...(tx.replacedTxHashes ?? [])].filter((h) => h !== receipt.hash);
    const rawTx = receipt.hash === tx.txHash ? tx.rawTx : await signedBytes(d.network.provider, receipt.hash);
    await fencedTransaction(this.db, lease, async (trx) => {
      const moved = await trx('settlement_funding_txs').where({ txHash: tx.txHash }).whereIn('status', OPEN).update({ txHash: receipt.hash, rawTx, replacedTxHashes, status: 'MINED', blockHash: receipt.blockHash, gasRefunded: false, updatedAt: trx.fn.now() });
      if (moved) await this.gas.chargeGasTo(trx, { organizationId: tx.organizationId, walletId: tx.walletId, blockchainId: d.network.blockchainId, fee: receipt.gasUsed * receipt.gasPrice, reference: gasReference(receipt.hash, receipt.blockHash) });
    });
    if (receipt.status !== 1) throw new FundingRefused(`settlement funding ${tx.txHash} reverted`);
  }

  private async drop(tx: FundingTx, lease: Fence, reason: string): Promise<never> {
    await fencedTransaction(this.db, lease, (trx) => trx('settlement_funding_txs').where({ txHash: tx.txHash }).whereIn('status', OPEN).update({ status: 'DROPPED', failureReason: reason, updatedAt: trx.fn.now() }));
    throw new FundingRefused(`settlement funding ${tx.txHash}: ${reason}`);
  }

  /** The node refuses it for good: DROPPED and its nonce given back, unless later transactions of the address took nonces after it (then it waits, SIGNED). */
  private async refuse(tx: FundingTx, lease: Fence, reason: string): Promise<never> {
    const dropped = await fencedTransaction(this.db, lease, (trx) =>
      giveBackNonce(trx, tx.blockchainId, tx.fromAddress, Number(tx.nonce), async () => (await trx('settlement_funding_txs').where({ txHash: tx.txHash }).whereIn('status', OPEN).update({ status: 'DROPPED', failureReason: reason, updatedAt: trx.fn.now() })) > 0),
    );
    if (!dropped) await this.db('settlement_funding_txs').where({ txHash: tx.txHash }).update({ failureReason: reason, updatedAt: this.db.fn.now() });
    throw new FundingRefused(`settlement funding ${tx.txHash} refused: ${reason}`);
  }

  /**
   * Funding transactions of a batch whose block a reorg took out of the chain, each charged for
   * the block it is in now: mined again in another canonical block, the row follows it there (its
   * gas charged for that block, the old block's charge given back, in one transaction); still
   * known to the node or its nonce still free, it is open again (SUBMITTED, the old charge given
   * back) and the step follows it; DROPPED (with the refund) only when another transaction took
   * its nonce. Repeatable: run each step while the batch is REORGED, so a crash halfway is repaired.
   */
  async followReorged(d: SettlementDeployment, batchId: string, lease: Fence): Promise<void> {
    const { provider, spec } = d.network;
    const txs: FundingTx[] = await this.db('settlement_funding_txs').where({ batchId, status: 'MINED', gasRefunded: false });
    for (const t of txs) {
      const where = await whereMined(provider, t.txHash, t.blockHash);
      if (where.kind === 'still' || where.kind === 'unsettled') continue; // unsettled: looked at again next step
      const receipt = where.kind === 'moved' ? where.receipt : null;
      const fate = receipt ? null : await nonceFate(provider, spec.confirmations, lineOf(t));
      await fencedTransaction(this.db, lease, async (trx) => {
        const row = trx('settlement_funding_txs').where({ txHash: t.txHash, status: 'MINED', gasRefunded: false, blockHash: t.blockHash });
        const moved = receipt
          ? await row.update({ blockHash: receipt.blockHash, updatedAt: trx.fn.now() })
          : fate?.kind === 'taken'
            ? await row.update({ status: 'DROPPED', gasRefunded: true, failureReason: 'a reorg took it out of the chain, and another transaction took its nonce', updatedAt: trx.fn.now() })
            : await row.update({ status: 'SUBMITTED', blockHash: null, updatedAt: trx.fn.now() });
        if (!moved) return;
        if (t.blockHash) await this.gas.refundGas(trx, gasReference(t.txHash, t.blockHash));
        if (receipt) await this.gas.chargeGasTo(trx, { organizationId: t.organizationId, walletId: t.walletId, blockchainId: d.network.blockchainId, fee: receipt.gasUsed * receipt.gasPrice, reference: gasReference(receipt.hash, receipt.blockHash) });
      });
    }
  }

}

/** A mined transaction's signed bytes, as the node has them. */
async function signedBytes(provider: ethers.Provider, hash: string): Promise<string> {
  const mined = await provider.getTransaction(hash);
  if (!mined) throw new Error(`the node has a receipt but not the transaction ${hash}`);
  return ethers.Transaction.from(mined).serialized;
}
