import { Knex } from 'knex';
import type { Logger } from '../../platform/logger';
import type { Outbox } from '../../platform/events/outbox';
import { formatScaled } from '../../platform/decimal';
import { startPollingLoop } from '../../platform/polling-loop';
import type { ChainNetwork, ChainNetworks, ChainService } from '../chains';
import type { SendingWallets } from '../wallets';
import { lineRequest } from './transaction-request';
import { cancelling, cancelRequested, moveLine, recordedBlock } from './sending-item';
import type { SendingItem, TransferOutcomeListener } from './sending-item';
import { CANCELLATION_GAS_LIMIT, cancellationCall, lineHashes, type CallRequest, type Eip1559Fees } from '../../platform/chain-port/evm-transactions';
import { TransferRefused } from '../../platform/chain-port/chain-port';
import { shownReason } from '../../platform/shown-reason';
import type { EvmChain } from '../../platform/chain-port/evm-chain';
import { giveBackNonce, takeSenderNonce } from './sender-nonces';
import { Hook } from '../../platform/events/hooks';
import type { Failpoints } from '../../platform/failpoints';
import { SolanaSender } from './solana-sender';
import { feeDecimals } from './transfer-families';

export interface TransactionSenderOptions {
  pollIntervalMs: number;
  bumpAfterMs: number;
  bumpPercent: number;
}

export type { SendingItem, TransferOutcomeListener } from './sending-item';

const BATCH = 20;
/** A signed transaction not yet accepted by the node is offered again after this long. */
const REBROADCAST_AFTER_MS = 2_000;

/**
 * Sends queued transfer lines. Nonces come from sender_nonces under a row lock, and each signed
 * transaction is committed before it is broadcast: a crash can only re-send the same bytes, so
 * concurrent lines from one address never share a nonce and none is lost. A transaction left
 * unmined below the market fee is signed again with the same nonce and a higher fee; the earlier
 * hash is kept, and whichever of them is mined settles the line.
 *
 * Every change of a line is a compare-and-set on the status and hash this sender read (`transition`):
 * when another sender moved the line first, this one stops instead of acting on what it read. A line
 * is signed again with a new nonce, or failed and refunded, only when none of its signed transactions
 * can still be mined (see nonceFate).
 *
 * A transfer an administrator asked to cancel (TransferCancellations) is not signed if it is not yet;
 * a line already signed gets a zero-value transaction to itself at its nonce, with higher fees, as its
 * transaction in force. Whichever of the line's transactions is mined decides: the cancellation
 * (the line failed, refunded, its gas charged) or the line's own (it stands).
 */
export class TransactionSender {
  /** Inside the step's transaction: a listener's error rolls the step back (it is tried again). */
  private readonly signed = new Hook<[Knex.Transaction, SendingItem]>();
  private readonly executed = new Hook<[Knex.Transaction, SendingItem]>();
  private readonly failed = new Hook<[Knex.Transaction, SendingItem]>();

  constructor(
    private readonly db: Knex,
    private readonly outbox: Outbox,
    private readonly networks: ChainNetworks,
    private readonly chains: ChainService,
    private readonly wallets: SendingWallets,
    private readonly options: TransactionSenderOptions,
    private readonly logger: Logger,
    failpoints?: Failpoints,
  ) {
    // Solana clusters' lines are sent with sendOnce (blockhash expiry); EVM's here, nonce-based with fee bumps (both through their chain port).
    this.solana = new SolanaSender(db, networks, chains, wallets, { signed: (trx, item) => this.signed.run(trx, item), finish: (item, outcome) => this.finish(item, outcome) }, failpoints, logger);
  }

  private readonly solana: SolanaSender;

  /** Adds each method the listener has to its hook (the order of the listeners is set in src/app.ts). */
  onOutcome(listener: TransferOutcomeListener): void {
    if (listener.signed) this.signed.add((trx, item) => listener.signed!(trx, item));
    if (listener.executed) this.executed.add((trx, item) => listener.executed!(trx, item));
    if (listener.failed) this.failed.add((trx, item) => listener.failed!(trx, item));
  }

  start(): { stop(): Promise<void> } {
    return startPollingLoop(() => this.tick(), this.options.pollIntervalMs, (e) => this.logger.warn({ err: e }, 'transaction sender: step failed, retrying'));
  }

  async tick(): Promise<void> {
    // One look at the open lines' partial index first: an idle sender reads nothing else.
    if (!(await this.anyOpenLine())) return;
    await this.failOrphans();
    await this.failCancelledBeforeSigning();
    // A chain whose node did not answer (or whose step failed) is not asked again this step: its
    // lines wait for the next, and every other chain's go on.
    const skipped = new Set<string>();
    const step = async (item: SendingItem, work: () => Promise<'unanswered' | void>) => {
      if (skipped.has(item.blockchainId)) return;
      try {
        if ((await work()) === 'unanswered') skipped.add(item.blockchainId);
      } catch (e) {
        skipped.add(item.blockchainId);
        this.logger.warn({ itemId: item.id, blockchainId: item.blockchainId, err: e }, 'transaction sender: a step failed; the chain is tried again next step');
      }
    };
    for (const item of await this.items(['QUEUED'])) await step(item, () => this.submit(item));
    for (const item of await this.items(['SIGNED'])) {
      if (cancelRequested(item) && !cancelling(item)) await step(item, () => this.cancel(item));
      else if (Date.now() - new Date(item.updatedAt).getTime() > REBROADCAST_AFTER_MS) await step(item, () => this.broadcast(item, item.rawTx!));
    }
    for (const item of await this.items(['SUBMITTED'])) await step(item, () => this.follow(item));
    await this.solana.tick();
  }

  private async anyOpenLine(): Promise<boolean> {
    const { rows } = await this.db.raw(`SELECT EXISTS (SELECT 1 FROM transfer_items WHERE status IN ('QUEUED', 'SIGNED', 'SUBMITTED')) AS open`);
    return rows[0].open;
  }

  /** Lines with their transfer's sending side: the one shape every step of the sender reads. */
  private sendingItems(): Knex.QueryBuilder {
    return this.db('transfer_items as i')
      .join('transfers as t', 't.id', 'i.transferId')
      .select('i.*', 't.organizationId', 't.masterWalletId', 't.addressId', 't.blockchainId', 't.fromAddress', 't.kind', 't.cancelRequestedAt');
  }

  /**
   * The EVM chains' lines (a Solana cluster's are the SolanaSender's), the oldest BATCH of each
   * chain: lines waiting on a chain whose node does not answer never hold back another chain's.
   */
  private async items(statuses: string[]): Promise<SendingItem[]> {
    const ranked = this.sendingItems()
      .select(this.db.raw('row_number() OVER (PARTITION BY t.blockchain_id ORDER BY i.created_at, i.position) AS chain_rank'))
      .whereNotIn('t.blockchainId', this.networks.solanaNetworks().map((n) => n.blockchainId))
      .whereIn('i.status', statuses)
      .whereIn('t.status', ['QUEUED', 'SUBMITTED'])
      .where((q) => q.whereNull('i.afterItemId').orWhereExists(this.db('transfer_items as d').whereRaw('d.id = i.after_item_id').where('d.status', 'CONFIRMED')));
    return this.db
      .from(ranked.as('x'))
      .where('x.chainRank', '<=', BATCH)
      .orderBy([{ column: 'x.createdAt' }, { column: 'x.position' }]);
  }

  /** A line waiting on another line that failed, or that an approver rejected, can never run. */
  private async failOrphans(): Promise<void> {
    const orphans: (SendingItem & { dependencyStatus: string })[] = await this.sendingItems().join('transfer_items as d', 'd.id', 'i.afterItemId').where('i.status', 'QUEUED').whereIn('d.status', ['FAILED', 'REJECTED']).select('d.status as dependencyStatus').orderBy('i.createdAt').limit(BATCH);
    await this.failEach(orphans, (item) => `the transaction it waited for ${item.dependencyStatus === 'REJECTED' ? 'was rejected' : 'failed'}`);
  }

  /**
   * Lines of a transfer to be cancelled that are not signed (whatever they wait for) fail at once:
   * nothing of theirs can be mined (a line queued again after a chain reset keeps only hashes the
   * chain does not know).
   */
  private async failCancelledBeforeSigning(): Promise<void> {
    const lines: SendingItem[] = await this.sendingItems()
      .where('i.status', 'QUEUED')
      .whereNotNull('t.cancelRequestedAt')
      .whereNotIn('t.blockchainId', this.networks.solanaNetworks().map((n) => n.blockchainId))
      .orderBy('i.createdAt')
      .limit(BATCH);
    await this.failEach(lines, (item) => (item.replacedTxHashes.length ? 'cancelled: none of its transactions can be mined any more' : 'cancelled before it was signed'));
  }

  /** Fails each line with its reason; one whose failing fails (a listener's error) is logged and tried again next step, the others go on. */
  private async failEach<T extends SendingItem>(lines: T[], reason: (item: T) => string): Promise<void> {
    for (const item of lines) {
      await this.finish(item, { status: 'FAILED', error: reason(item) }).catch((e) => this.logger.warn({ itemId: item.id, err: e }, 'transaction sender: failing a line failed; tried again next step'));
    }
  }

  /** Signs and broadcasts a queued line; 'unanswered' when the chain's node did not answer its gas estimate. */
  private async submit(item: SendingItem): Promise<'unanswered' | void> {
    if (cancelRequested(item)) return; // failed by the next step's failCancelledBeforeSigning
    const network = this.networks.get(item.blockchainId);
    const asset = await this.chains.assetRow(item.assetId);
    if (!network || !asset) return this.finish(item, { status: 'FAILED', error: 'the chain or asset is no longer configured' });
    const chain = network.port;
    const call = lineRequest(asset, item);
    let gasLimit: bigint;
    try {
      gasLimit = await chain.gasLimit(item.fromAddress, call);
    } catch (e) {
      if (e instanceof TransferRefused) return this.finish(item, { status: 'FAILED', error: `the chain refuses the transaction: ${e.message}` });
      // The node did not answer: nothing was signed, so the line waits for the next step.
      const error = `the node did not estimate the transaction's gas (tried again): ${shownReason(e)}`;
      this.logger.warn({ itemId: item.id, err: e }, 'gas estimate failed; will retry');
      if (item.error !== error) await this.transition(this.db, item, { error });
      return 'unanswered';
    }
    const fees = await chain.fees();
    const signer = await this.wallets.signer(item.organizationId, item.masterWalletId, item.addressId, network.provider);
    const signed = await this.db.transaction(async (trx) => {
      const locked = await trx('transfer_items').where({ id: item.id, status: 'QUEUED' }).forUpdate().skipLocked().first();
      if (!locked) return null;
      const nonce = await takeSenderNonce(trx, item.blockchainId, item.fromAddress, chain);
      const tx = await chain.signWithNonce(signer, { nonce, gasLimit, fees, call });
      const changes = { status: 'SIGNED', nonce: String(nonce), txHash: tx.txHash, rawTx: tx.raw, gasLimit: gasLimit.toString(), maxFeePerGas: fees.maxFeePerGas.toString(), maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString() };
      if (!(await this.transition(trx, item, changes))) return null;
      await trx('transfers').where({ id: item.transferId, status: 'QUEUED' }).update({ status: 'SUBMITTED', updatedAt: trx.fn.now() });
      const signedItem = { ...item, ...changes };
      await this.signed.run(trx, signedItem);
      return signedItem;
    });
    if (signed) await this.broadcast(signed, signed.rawTx);
  }

  /**
   * Broadcasts a signed line under its row lock (a line another sender is broadcasting is skipped):
   * what the node answers, and a refusal's give-back of the nonce, then cannot interleave with
   * another sender broadcasting the same bytes, which could get them mined after the line failed.
   */
  private async broadcast(item: SendingItem, rawTx: string): Promise<void> {
    const network = this.networks.get(item.blockchainId);
    // A chain no longer configured: its signed lines wait (as its submitted ones do) rather than stop every other chain's.
    if (!network) return;
    await this.db.transaction(async (trx) => {
      const held = await trx('transfer_items').where({ id: item.id, status: item.status, txHash: item.txHash }).forUpdate().skipLocked().first('id');
      if (!held) return;
      const outcome = await network.port.broadcastLine(item, rawTx);
      if (outcome.kind === 'taken') return this.requeue(trx, item, `nonce ${item.nonce} was used by another transaction (${outcome.by})`);
      if (outcome.kind === 'refused') return this.releaseOrWait(trx, item, network.port, outcome.reason);
      if (outcome.kind === 'retry') return this.logger.warn({ itemId: item.id, err: outcome.reason }, 'broadcast failed; will retry');
      await this.markSubmitted(trx, item);
    });
  }

  /**
   * moveLine: false when another sender moved the line first (the caller must then stop). The hashes
   * it replaced are compared too: a sender that read the line before a fee bump was watched must not
   * write back a list without it.
   */
  private async transition(db: Knex | Knex.Transaction, item: SendingItem, changes: Record<string, unknown>): Promise<boolean> {
    return moveLine(db, item, changes, item.replacedTxHashes ?? []);
  }

  private async markSubmitted(db: Knex | Knex.Transaction, item: SendingItem): Promise<void> {
    await this.transition(db, item, { status: 'SUBMITTED', submittedAt: db.fn.now(), error: null });
  }

  /**
   * Records the block a line not yet final was seen mined in (null: in none now), so the checks of
   * later sends from the address stop counting its amount as still in the balance (in-flight.ts).
   */
  private async noteBlock(item: SendingItem, blockNumber: number | null): Promise<void> {
    if (recordedBlock(item) === blockNumber) return;
    await this.transition(this.db, item, { blockNumber });
  }

  /**
   * Signed again from scratch with a fresh nonce: only for a line whose nonce another transaction
   * took for good. Its earlier hashes stay in replacedTxHashes, so they are still watched.
   */
  private async requeue(db: Knex | Knex.Transaction, item: SendingItem, reason: string): Promise<void> {
    if (cancelRequested(item)) {
      // Nothing of the line's was mined and it is to be cancelled: it fails rather than being signed again.
      const outcome = { status: 'FAILED' as const, error: `cancelled: ${reason}` };
      return void (await ('isTransaction' in db && db.isTransaction ? this.finishIn(db as Knex.Transaction, item, outcome) : this.finish(item, outcome)));
    }
    const moved = await this.transition(db, item, { status: 'QUEUED', nonce: null, txHash: null, rawTx: null, replacedTxHashes: lineHashes(item), blockNumber: null, error: reason });
    if (moved) this.logger.warn({ itemId: item.id, reason }, 'transfer line re-queued');
  }

  /**
   * The node refused the transaction for good. A line the node still holds a transaction of (an
   * earlier broadcast went through) may yet be mined, so it is followed, never refunded. Otherwise,
   * if its nonce is the newest taken, the nonce is given back and the line fails, in one
   * transaction; if later transactions depend on the nonce, it stays signed and is offered again.
   */
  private async releaseOrWait(trx: Knex.Transaction, item: SendingItem, chain: EvmChain, reason: string): Promise<void> {
    if (await chain.nodeKnowsAny(item)) return this.markSubmitted(trx, item);
    const failed = await giveBackNonce(trx, item.blockchainId, item.fromAddress, Number(item.nonce), () => this.finishIn(trx, item, { status: 'FAILED', error: reason }));
    if (failed) this.logger.warn({ itemId: item.id, error: reason }, 'transfer line failed');
    else await this.transition(trx, item, { error: reason });
  }

  /**
   * Waits for a receipt of any of the line's transactions and its confirmations; signs it again with
   * a new nonce if another transaction took its nonce for good; bumps the fee when stuck.
   */
  private async follow(item: SendingItem): Promise<void> {
    const network = this.networks.get(item.blockchainId);
    if (!network) return;
    const hashes = lineHashes(item);
    const chain = network.port;
    const fate = await chain.lineFate(item);
    if (fate.kind === 'taken') return this.requeue(this.db, item, `nonce ${item.nonce} was used by another transaction (${fate.by})`);
    if (fate.kind === 'undecided') return void this.logger.warn({ itemId: item.id, nonce: item.nonce, reason: fate.reason }, "transaction sender: the line's nonce is used, by which transaction the node does not show yet; the line waits");
    if (fate.kind === 'mined') {
      const receipt = fate.receipt;
      if ((await chain.height('final')) < receipt.blockNumber) return this.noteBlock(item, receipt.blockNumber);
      const cancellation = (item.cancelTxHashes ?? []).includes(receipt.hash);
      return this.finish(item, {
        status: receipt.status === 1 && !cancellation ? 'CONFIRMED' : 'FAILED',
        error: cancellation ? 'cancelled: a zero-value transaction to the sender took its nonce' : receipt.status === 1 ? null : 'the transaction reverted on chain',
        txHash: receipt.hash,
        replacedTxHashes: hashes.filter((h) => h !== receipt.hash),
        blockNumber: receipt.blockNumber,
        gasUsed: receipt.gasUsed.toString(),
        feePaid: receipt.fee.toString(),
      });
    }
    // A reorg took the line out of the block it was seen in: its amount is back in the balance.
    if (item.blockNumber !== null) await this.noteBlock(item, null);
    if (cancelRequested(item) && !cancelling(item)) return this.cancel(item);
    if (cancelling(item) && !(await chain.knows(item.txHash!))) return this.offerCancellation(item, network);
    if (!(await chain.nodeKnowsAny(item))) {
      // The node knows none of the line's transactions (dropped, or the broadcast failed): offer the one in force again.
      await chain.rebroadcast(item.rawTx!).catch((e) => this.logger.warn({ itemId: item.id, err: e }, 're-broadcast failed; will retry'));
      return;
    }
    if (Date.now() - new Date(item.submittedAt!).getTime() > this.options.bumpAfterMs) await this.bumpIfUnderpriced(item, network);
  }

  /**
   * Signs a zero-value transaction to the sender at the line's nonce, dearer than every transaction
   * of the line's the node holds, and makes it the line's transaction in force at once, every earlier
   * hash still watched (committed before it is broadcast): from then on it is offered, followed and
   * bumped as the line's own would be, and whichever of them is mined settles the line (follow).
   */
  private async cancel(item: SendingItem): Promise<void> {
    const network = this.networks.get(item.blockchainId);
    if (!network) return;
    const call = cancellationCall(item.fromAddress);
    const [fees, gasLimit] = await Promise.all([
      network.port.replacementFees(item, feesOf(item), this.options.bumpPercent),
      // A node that does not answer skips this step (the chain's step fails); one that refuses the estimate gets a plain send's gas.
      network.port.gasLimit(item.fromAddress, call).catch((e: unknown) => (e instanceof TransferRefused ? CANCELLATION_GAS_LIMIT : Promise.reject(e))),
    ]);
    const tx = await this.signAtNonce(item, network, call, gasLimit, fees);
    const changes = { txHash: tx.txHash, rawTx: tx.raw, gasLimit: gasLimit.toString(), ...feeColumns(fees), replacedTxHashes: lineHashes(item), cancelTxHashes: [...(item.cancelTxHashes ?? []), tx.txHash], submittedAt: this.db.fn.now() };
    if (!(await this.transition(this.db, item, changes))) return; // another worker moved the line first
    this.logger.warn({ itemId: item.id, replaced: item.txHash, by: tx.txHash }, 'transfer line cancellation signed');
    const cancelled = { ...item, ...changes, submittedAt: new Date() };
    if (item.status === 'SIGNED') return this.broadcast(cancelled, tx.raw);
    // Whatever the node answers, follow offers it again while the node does not hold it.
    const outcome = await network.port.broadcastLine(cancelled, tx.raw);
    if (outcome.kind !== 'accepted') this.logger.warn({ itemId: item.id, outcome: outcome.kind, err: 'reason' in outcome ? outcome.reason : undefined }, 'cancellation not taken yet; offered again');
  }

  /**
   * Offers the line's cancellation (its transaction in force) to a node that does not hold it. One
   * the node cannot take yet (no answer, no coin for its gas) is offered again at the next step; if
   * the node holds a dearer transaction at the nonce instead ("replacement underpriced"), a dearer
   * cancellation takes its place (one a step).
   */
  private async offerCancellation(item: SendingItem, network: ChainNetwork): Promise<void> {
    const outcome = await network.port.broadcastLine(item, item.rawTx!);
    if (outcome.kind === 'retry' || outcome.kind === 'refused') return void this.logger.warn({ itemId: item.id, outcome: outcome.kind, err: outcome.reason }, 'cancellation not taken yet; offered again');
    if (outcome.kind === 'taken' || (await network.port.knows(item.txHash!))) return; // a taken nonce: follow reads its fate next
    await this.cancel(item);
  }

  private async signAtNonce(item: SendingItem, network: ChainNetwork, call: CallRequest, gasLimit: bigint, fees: Eip1559Fees) {
    const signer = await this.wallets.signer(item.organizationId, item.masterWalletId, item.addressId, network.provider);
    return network.port.signWithNonce(signer, { nonce: Number(item.nonce), gasLimit, fees, call });
  }

  private async bumpIfUnderpriced(item: SendingItem, network: ChainNetwork): Promise<void> {
    const chain = network.port;
    const bumped = await chain.bumpedFees(feesOf(item), this.options.bumpPercent);
    if (!bumped) return; // priced at the market: it only needs patience
    const { maxFeePerGas: maxFee, maxPriorityFeePerGas: tip } = bumped;
    // A cancellation is bumped as a cancellation.
    const cancellation = cancelling(item);
    const call = cancellation ? cancellationCall(item.fromAddress) : lineRequest((await this.chains.assetRow(item.assetId))!, item);
    const tx = await this.signAtNonce(item, network, call, BigInt(item.gasLimit!), bumped);
    // Its hash is watched with the line's others before it is broadcast (after a crash every hash
    // that might be mined is known), and the line's transaction stays the one it had until the node
    // takes the dearer one. The next bump waits its turn whatever the node answers.
    const watching = { ...item, replacedTxHashes: [...new Set([...item.replacedTxHashes, tx.txHash])], cancelTxHashes: cancellation ? [...new Set([...(item.cancelTxHashes ?? []), tx.txHash])] : item.cancelTxHashes };
    if (!(await this.transition(this.db, item, { replacedTxHashes: watching.replacedTxHashes, cancelTxHashes: watching.cancelTxHashes ?? [], submittedAt: this.db.fn.now() }))) return; // another worker moved the line first
    const outcome = await chain.broadcastLine(watching, tx.raw);
    // "Replacement underpriced" also reads as accepted (the node holds one of the line's transactions
    // at the nonce); the bump becomes the line's transaction only if that one is the bump itself.
    if (outcome.kind !== 'accepted' || !(await chain.knows(tx.txHash))) {
      this.logger.warn({ itemId: item.id, bump: tx.txHash, outcome: outcome.kind, err: 'reason' in outcome ? outcome.reason : undefined }, 'fee bump not taken; the line keeps its transaction');
      return;
    }
    const replaced = lineHashes(watching).filter((h) => h !== tx.txHash);
    if (await this.transition(this.db, watching, { txHash: tx.txHash, rawTx: tx.raw, maxFeePerGas: maxFee.toString(), maxPriorityFeePerGas: tip.toString(), replacedTxHashes: replaced })) {
      this.logger.info({ itemId: item.id, replaced: item.txHash, by: tx.txHash, maxFeePerGas: maxFee.toString() }, 'fee bumped');
    }
  }

  /** Marks a line final, settles its transfer's status and emits the transfer event, in one transaction. */
  private async finish(item: SendingItem, outcome: Outcome): Promise<void> {
    const done = await this.db.transaction((trx) => this.finishIn(trx, item, outcome));
    if (done && outcome.status === 'FAILED') this.logger.warn({ itemId: item.id, error: outcome.error }, 'transfer line failed');
  }

  /** finish inside the caller's transaction; false (and nothing done) when another sender moved the line first. */
  private async finishIn(trx: Knex.Transaction, item: SendingItem, outcome: Outcome): Promise<boolean> {
    if (!(await this.transition(trx, item, outcome))) return false;
    const lines: { status: string }[] = await trx('transfer_items').where({ transferId: item.transferId }).select('status');
    const open = lines.some((l) => !['CONFIRMED', 'FAILED', 'REJECTED'].includes(l.status));
    const status = open ? 'SUBMITTED' : lines.every((l) => l.status === 'CONFIRMED') ? 'CONFIRMED' : 'FAILED';
    await trx('transfers').where({ id: item.transferId }).update({ status, updatedAt: trx.fn.now() });
    const final = { ...item, ...outcome, status: outcome.status } as SendingItem;
    await (outcome.status === 'CONFIRMED' ? this.executed : this.failed).run(trx, final);
    // A swap's lines are reported as the swap (its listener emits *.swap_executed / *.swap_failed).
    if (item.kind !== 'swap') await this.outbox.publish(trx, await this.event(item, outcome));
    return true;
  }

  private async event(item: SendingItem, outcome: { status: string; error: string | null; txHash?: string; blockNumber?: number; feePaid?: string }) {
    const [asset, chain, wallet] = await Promise.all([this.chains.assetRow(item.assetId), this.chains.blockchainRow(item.blockchainId), this.wallets.resolve(item.organizationId, item.addressId ? { addressId: item.addressId } : { masterWalletId: item.masterWalletId }).catch(() => null)]);
    const explorer = (chain.configurations as { explorerUrl?: string } | null)?.explorerUrl;
    const txhash = outcome.txHash ?? item.txHash;
    return {
      organizationId: item.organizationId,
      type: `${item.addressId ? 'address' : 'master'}.${outcome.status === 'CONFIRMED' ? 'transfer_executed' : 'transfer_failed'}`,
      data: {
        transferId: item.transferId,
        itemId: item.id,
        kind: item.kind,
        status: outcome.status,
        txhash,
        explorerUrl: explorer && txhash ? `${explorer.replace(/\/$/, '')}/tx/${txhash}` : '',
        from: item.fromAddress,
        to: item.recipient,
        amount: formatScaled(BigInt(item.rawAmount), asset!.decimals),
        asset: { id: asset!.id, symbol: asset!.symbol, decimals: asset!.decimals },
        blockchain: { id: chain.id, name: chain.name },
        wallet: { id: item.addressId ?? item.masterWalletId, name: wallet?.name ?? null, walletAddress: item.fromAddress, masterWalletId: item.masterWalletId },
        blockNumber: outcome.blockNumber === undefined ? null : String(outcome.blockNumber),
        gasFee: outcome.feePaid ? formatScaled(BigInt(outcome.feePaid), feeDecimals(chain)) : null,
        error: outcome.error,
      },
    };
  }
}

const feesOf = (item: SendingItem): Eip1559Fees => ({ maxFeePerGas: BigInt(item.maxFeePerGas!), maxPriorityFeePerGas: BigInt(item.maxPriorityFeePerGas!) });
const feeColumns = (fees: Eip1559Fees) => ({ maxFeePerGas: fees.maxFeePerGas.toString(), maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString() });

type Outcome = { status: 'CONFIRMED' | 'FAILED'; error: string | null; txHash?: string; replacedTxHashes?: string[]; blockNumber?: number; gasUsed?: string; feePaid?: string };

