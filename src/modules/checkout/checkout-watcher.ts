import { Knex } from 'knex';
import { chainAsset, type ChainPort } from '../../platform/chain-port/chain-port';
import type { Logger } from '../../platform/logger';
import { startPollingLoop } from '../../platform/polling-loop';
import type { Worker } from '../../platform/worker';
import type { ChainNetworks } from '../chains';
import { assetsById } from '../chains';
import { chainTransferColumn } from '../deposits';
import type { CheckoutDesk } from './checkout-desk';
import type { CheckoutDeposits } from './checkout-deposits';
import type { CheckoutAddressRetirement } from './address-retirement';
import { CheckoutModel, CheckoutTransferModel } from './checkout.model';

/** At most this many checkouts (per chain: checkouts detected, payments counted) are looked at per step of each kind. */
const BATCH = 200;

/**
 * The checkouts' own loop (worker role): shows a payment as DETECTED as soon as an EVM chain's head
 * carries it (before the deposit watcher records it at the chain's confirmation depth), counts
 * the confirmations of recorded payments until they have the required number, expires
 * checkouts nobody paid in time, and retires the addresses of checkouts past their late-payment
 * grace (CheckoutAddressRetirement).
 */
export class CheckoutWatcher implements Worker {
  private loop?: { stop(): Promise<void> };
  /** Each chain's pass through its open checkouts (detect). */
  private readonly sweeps = new Map<string, DetectionSweep>();

  constructor(
    private readonly db: Knex,
    private readonly desk: CheckoutDesk,
    private readonly deposits: CheckoutDeposits,
    private readonly networks: ChainNetworks,
    private readonly intervalMs: number,
    private readonly retirement: CheckoutAddressRetirement,
    private readonly logger: Logger,
    /** Per chain and pass: the open checkouts detection looks at, the payments whose confirmations are counted. */
    private readonly batch = BATCH,
  ) {}

  start(): void {
    this.loop = startPollingLoop(() => this.tick(), this.intervalMs, (e) => this.logger.warn({ err: e }, 'checkout watcher: step failed, retrying'));
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
  }

  /** Each step on its own: one that fails (a chain's node down) holds back none of the others. */
  async tick(): Promise<void> {
    const steps: [string, () => Promise<unknown>][] = [
      ['expire', () => this.expire()],
      ['count confirmations', () => this.countConfirmations()],
      ['detect', () => this.detect()],
      ['retire addresses', () => this.retirement.step()],
    ];
    for (const [name, step] of steps) {
      await step().catch((e) => this.logger.warn({ step: name, err: e }, 'checkout watcher: a step failed; the others went on'));
    }
  }

  /** Runs `work` for each chain with a port, one after the other; a chain whose node does not answer is logged and holds back none of the others. */
  private async onEachChain(blockchainIds: string[], work: (blockchainId: string, port: ChainPort) => Promise<void>): Promise<void> {
    for (const blockchainId of blockchainIds) {
      const port = this.networks.port(blockchainId);
      if (!port) continue;
      try {
        await work(blockchainId, port);
      } catch (e) {
        this.logger.warn({ blockchainId, err: e }, 'checkout watcher: a chain did not answer; its checkouts wait for the next pass');
      }
    }
  }

  /** Open checkouts with nothing counted, past their expiry: EXPIRED. */
  async expire(): Promise<void> {
    const due = await CheckoutModel.query(this.db).whereIn('status', ['AWAITING_PAYMENT', 'DETECTED']).where('expiresAt', '<=', new Date()).orderBy('expiresAt').limit(BATCH).select('id');
    for (const { id } of due) {
      await this.db.transaction(async (trx) => {
        const checkout = await this.desk.locked(trx, id);
        if (checkout.status === 'AWAITING_PAYMENT' || checkout.status === 'DETECTED') await this.desk.update(trx, checkout, {});
      });
    }
  }

  /**
   * Recorded payments still confirming: their count from each chain's head, while their block is
   * still the chain's block at that height (after a reorg the deposit watcher reverts them).
   * Each served chain has a batch of its own: a chain whose node does not answer, however many
   * payments confirm on it, holds back no other chain's.
   */
  async countConfirmations(): Promise<void> {
    // Only chains this deployment serves: a dropped chain's payments are never looked at.
    // Counted in blocks on EVM only: a Solana payment is recorded once its slot is finalized, and slots are not confirmations.
    await this.onEachChain(this.evmChainIds(), (blockchainId, port) => this.countConfirmationsOn(blockchainId, port));
  }

  /** The EVM chains this deployment serves (a dropped chain's checkouts are never looked at). */
  private evmChainIds(): string[] {
    return this.networks
      .ported()
      .filter((n) => n.port.family === 'evm')
      .map((n) => n.blockchainId);
  }

  /** The oldest payments confirming on one chain (a batch), each counted against the chain's head. */
  private async countConfirmationsOn(blockchainId: string, port: ChainPort): Promise<void> {
    // Each on its own chain: a WRONG_CHAIN transfer is not on the checkout's.
    const confirming: { id: string; chainTransferId: string; blockNumber: string; confirmations: number }[] = await this.db('checkout_transfers')
      .where({ status: 'CONFIRMING', blockchainId })
      .orderBy('createdAt')
      .limit(this.batch)
      .select('id', 'chainTransferId', 'blockNumber', 'confirmations');
    if (!confirming.length) return;
    // The block each was recorded in, from its chain transfer.
    const recordedIn = await chainTransferColumn(this.db, confirming.map((t) => t.chainTransferId), 'blockHash');
    const rows = confirming.filter((t) => recordedIn.has(t.chainTransferId)).map((t) => ({ ...t, blockHash: recordedIn.get(t.chainTransferId)! }));
    const head = await port.height('seen');
    // Payments share blocks: each block's hash is read once per pass.
    const hashes = new Map<number, Promise<string | null | undefined>>();
    for (const row of rows) {
      const blockNumber = Number(row.blockNumber);
      const confirmations = head - blockNumber + 1;
      if (confirmations <= row.confirmations) continue;
      if (!hashes.has(blockNumber)) hashes.set(blockNumber, port.blockHash(blockNumber, 'seen'));
      if ((await hashes.get(blockNumber)) !== row.blockHash) continue;
      await this.db.transaction(async (trx) => {
        const transfer = await CheckoutTransferModel.query(trx).findById(row.id);
        if (!transfer || transfer.status !== 'CONFIRMING') return;
        const checkout = await this.desk.locked(trx, transfer.checkoutId);
        const fresh = await CheckoutTransferModel.query(trx).findById(row.id).forUpdate();
        if (fresh?.status !== 'CONFIRMING' || confirmations <= fresh.confirmations) return;
        // Counted only from the block the chain was read at: a reorg may have recorded the payment again elsewhere since.
        const recordedNow = (await chainTransferColumn(trx, [row.chainTransferId], 'blockHash')).get(row.chainTransferId);
        if (String(fresh.blockNumber) !== String(row.blockNumber) || recordedNow !== row.blockHash) return;
        await this.deposits.advance(trx, checkout, fresh, confirmations);
      });
    }
  }

  /**
   * Checkouts still awaiting payment whose address holds the asset at the chain head: DETECTED (EVM).
   * Each chain's open checkouts are gone through oldest first, a batch per pass (detectOn), so every
   * one is looked at within a bounded number of passes however many others are opened since. A
   * checkout with a deposit recorded and not counted is left to the deposit watcher: its balance may
   * be that deposit (AML-held) or the gas of its sweep.
   */
  async detect(): Promise<void> {
    // On EVM chains only: a Solana payment is final when recorded (its slot finalized) and goes from
    // waiting straight to paid. What a Solana head (processed) carries may yet be dropped: it would
    // have moved a payment intent to PROCESSING before its payment is final, and left it there
    // until the expiry when dropped.
    await this.onEachChain(this.evmChainIds(), (blockchainId, port) => this.detectOn(blockchainId, port));
  }

  /**
   * The next batch of one chain's open checkouts after where its last pass stopped, their balances
   * read at the head; past the newest, the next pass starts again from the oldest. Once every open
   * checkout was looked at since the head last moved, the chain is skipped until it moves: a fresh
   * address can only receive in a new block.
   */
  private async detectOn(blockchainId: string, port: ChainPort): Promise<void> {
    const sweep = this.sweeps.get(blockchainId) ?? { after: null, startedAt: null, sweptAt: null };
    this.sweeps.set(blockchainId, sweep);
    const open = await this.openAfter(blockchainId, sweep.after);
    if (!open.length) {
      if (sweep.after) Object.assign(sweep, { after: null, sweptAt: sweep.startedAt });
      return;
    }
    const head = await port.height('seen');
    if (!sweep.after && sweep.sweptAt === head) return;
    if (!sweep.after) sweep.startedAt = head;
    const assets = new Map((await assetsById(this.db, open.map((c) => c.assetId))).map((a) => [a.id, a]));
    await Promise.all(
      open
        .filter((c) => assets.has(c.assetId))
        .map(async (c) => {
          const balance = await port.balance(c.depositAddress, chainAsset(assets.get(c.assetId)!), 'seen');
          if (balance <= 0n) return;
          await this.db.transaction(async (trx) => {
            const checkout = await this.desk.locked(trx, c.id);
            if (checkout.status !== 'AWAITING_PAYMENT') return;
            // Read again under the checkout's lock: the deposit watcher may have recorded an uncounted deposit since.
            if (await uncountedTransfers(trx, c.id).first()) return;
            await this.desk.update(trx, checkout, { seenRaw: balance.toString() });
          });
        }),
    );
    const last = open[open.length - 1];
    if (open.length < this.batch) Object.assign(sweep, { after: null, sweptAt: sweep.startedAt });
    else sweep.after = last.id;
  }

  /** A batch of a chain's checkouts awaiting payment, oldest first (by creation, then id), after checkout `after` (from the oldest when null). */
  private async openAfter(blockchainId: string, after: string | null): Promise<CheckoutModel[]> {
    const open = CheckoutModel.query(this.db)
      .where({ status: 'AWAITING_PAYMENT', blockchainId })
      .where('expiresAt', '>', new Date())
      .whereNotExists(uncountedTransfers(this.db))
      .orderBy([{ column: 'createdAt' }, { column: 'id' }])
      .limit(this.batch);
    // The position read from the row itself: a Date would drop the timestamp's microseconds.
    return await (after ? open.whereRaw('(checkouts.created_at, checkouts.id) > (select c.created_at, c.id from checkouts c where c.id = ?)', [after]) : open);
  }
}

/**
 * A chain's passes through its open checkouts: the last checkout the current one looked at (null: it
 * starts again from the oldest), the head it started at, and the head the last complete one started at.
 */
interface DetectionSweep {
  after: string | null;
  startedAt: number | null;
  sweptAt: number | null;
}

/** A checkout's transfers recorded and not counted (reverted ones aside): this checkout's, or as a subquery correlated to `checkouts`. */
function uncountedTransfers(db: Knex | Knex.Transaction, checkoutId?: string) {
  const q = CheckoutTransferModel.query(db).whereNot('kind', 'PAYMENT').whereNot('status', 'REVERTED');
  return checkoutId ? q.where('checkoutId', checkoutId) : q.whereColumn('checkout_transfers.checkoutId', 'checkouts.id');
}
