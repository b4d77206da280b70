import { Knex } from 'knex';
import type { ChainNetworks } from '../chains';
import { scannedBlockNumber } from '../deposits';
import { deactivateAddresses, type OpenCheckout } from '../wallets';
import { SweepsDue } from '../withdrawals';
import type { CheckoutStatus } from './checkout.domain';

/** Checkouts retired per step: 10,000 expired ones leave the deposit watcher within ten steps. */
const BATCH = 1_000;
/** A payment to these is still on its way: its checkout waits for it. */
const IN_FLIGHT: CheckoutStatus[] = ['DETECTED', 'CONFIRMING'];
/** Outgoing transfers (a checkout's settlement sweep, its gas) not yet final. */
const OPEN_TRANSFERS = ['PENDING_APPROVAL', 'QUEUED', 'SUBMITTED'];

/**
 * The checkouts into a master wallet on these chains whose addresses are not retired yet (still
 * watched for them), soonest to expire first: at most `limit`, and how many in all. The wallets'
 * WalletDependents.openCheckouts: their wallet must stay watched there until they are retired.
 */
export async function openCheckouts(db: Knex | Knex.Transaction, masterWalletId: string, blockchainIds: string[], limit: number): Promise<{ checkouts: OpenCheckout[]; total: number }> {
  const open = () => db('checkouts').where({ masterWalletId }).whereIn('blockchainId', blockchainIds).whereNull('addressRetiredAt');
  const [{ count }] = await open().count({ count: '*' });
  const checkouts: OpenCheckout[] = Number(count) ? await open().orderBy('expiresAt').limit(limit).select('id', 'blockchainId', 'paymentLinkId', 'paymentIntentId', 'expiresAt') : [];
  return { checkouts, total: Number(count) };
}

/**
 * Deactivates the addresses of checkouts that ended long enough ago, so the deposit watcher stops
 * watching them and opening sessions in a loop cannot grow its work for ever. A checkout's address
 * is retired once
 * - its expiry plus the late-payment grace has passed, on the clock and in the blocks the deposit
 *   watcher has scanned on its chain (a watcher running behind still records every payment mined
 *   within the grace: LATE, or PAYMENT when mined before the expiry);
 * - no payment to it is on its way (DETECTED, CONFIRMING, or a transfer still confirming) and no
 *   transfer from it (its sweep) is still open.
 * Each checkout is retired once (`address_retired_at`): an address its merchant activates again
 * stays watched.
 */
export class CheckoutAddressRetirement {
  constructor(
    private readonly db: Knex,
    private readonly networks: ChainNetworks,
    private readonly graceMs: number,
  ) {}

  /** One pass; returns how many addresses were retired. */
  async step(now = new Date()): Promise<number> {
    const cutoff = new Date(now.getTime() - this.graceMs);
    if (!(await this.db('checkouts').whereNull('addressRetiredAt').where('expiresAt', '<=', cutoff).first('id'))) return 0;
    // Read before the checkouts: a payment in a block scanned after this is seen by the query below.
    const scanned = new Map<string, number>();
    // A chain whose node does not answer retires nothing this pass; the others go on.
    for (const network of this.networks.ported()) scanned.set(network.blockchainId, await this.scannedUpTo(network.blockchainId).catch(() => 0));
    const due: { id: string; addressId: string; blockchainId: string; expiresAt: Date }[] = await this.db('checkouts as c')
      .whereNull('c.addressRetiredAt')
      .where('c.expiresAt', '<=', cutoff)
      .whereNotIn('c.status', IN_FLIGHT)
      .whereNotExists((q) => q.select(1).from('checkout_transfers as t').whereRaw('t.checkout_id = c.id').where('t.status', 'CONFIRMING'))
      .whereNotExists((q) => q.select(1).from('transfers as x').whereRaw('x.address_id = c.address_id').whereIn('x.status', OPEN_TRANSFERS))
      // A sweep still due (not arranged yet, or held by AML): the address stays watched until it is sent.
      .whereNotIn('c.addressId', SweepsDue.addresses(this.db))
      .orderBy('c.expiresAt')
      .limit(BATCH)
      .select('c.id', 'c.addressId', 'c.blockchainId', 'c.expiresAt');
    const retiring = due.filter((c) => c.expiresAt.getTime() + this.graceMs < (scanned.get(c.blockchainId) ?? 0));
    if (!retiring.length) return 0;
    await this.db.transaction(async (trx) => {
      await deactivateAddresses(trx, retiring.map((c) => c.addressId));
      await trx('checkouts').whereIn('id', retiring.map((c) => c.id)).whereNull('addressRetiredAt').update({ addressRetiredAt: trx.fn.now() });
    });
    return retiring.length;
  }

  /** The time (ms) of the newest block the deposit watcher has scanned on a chain (either family, through its port); 0 before its first scan. */
  private async scannedUpTo(blockchainId: string): Promise<number> {
    const port = this.networks.port(blockchainId);
    const scanned = await scannedBlockNumber(this.db, blockchainId);
    if (!port || scanned === undefined) return 0;
    const time = await port.blockTime(scanned);
    return time === null ? 0 : time * 1000;
  }
}
