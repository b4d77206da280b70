import type { Knex } from 'knex';
import { fetchPage } from '../../platform/db/fetch-page';
import type { PageWindow } from '../../platform/paging';
import { ChainTransferModel } from './chain-transfer.model';

/** Confirmed incoming transfers from a sanctioned address that no admin has released yet. */
export function unreleasedFlags(db: Knex | Knex.Transaction): Knex.QueryBuilder {
  return db('chain_transfers').where({ direction: 'incoming', status: 'CONFIRMED' }).whereNotNull('amlFlaggedAt').whereNull('amlReleasedAt');
}

/**
 * Whether a wallet (a deposit address, or a master wallet's own address when addressId is null)
 * holds an incoming transfer from a sanctioned address that no admin has released: then nothing may
 * leave it automatically (auto-sweep; settlement rules, when triggered and when executed).
 */
export async function heldByAml(db: Knex | Knex.Transaction, wallet: { masterWalletId: string; addressId: string | null }): Promise<boolean> {
  return !!(await unreleasedFlags(db).where({ masterWalletId: wallet.masterWalletId, addressId: wallet.addressId }).first('id'));
}

/** The organisation's incoming transfers from sanctioned addresses, newest flag first; `released`: true released only, false still held only, absent both. */
export async function flaggedDeposits(db: Knex | Knex.Transaction, organizationId: string, filter: PageWindow & { released?: boolean }): Promise<{ rows: ChainTransferModel[]; total: number }> {
  const q = ChainTransferModel.query(db)
    .where({ organizationId, direction: 'incoming' })
    .whereNotNull('amlFlaggedAt')
    .modify((b) => {
      if (filter.released === true) b.whereNotNull('amlReleasedAt');
      if (filter.released === false) b.whereNull('amlReleasedAt');
    });
  return fetchPage<ChainTransferModel>(q, filter, [{ column: 'amlFlaggedAt', order: 'desc' }, { column: 'id', order: 'desc' }]);
}

/** A flagged incoming transfer of the organisation (`lock`: FOR UPDATE, in the caller's transaction), or undefined. */
export async function flaggedDeposit(db: Knex | Knex.Transaction, organizationId: string, id: string, lock = false): Promise<ChainTransferModel | undefined> {
  const q = ChainTransferModel.query(db).findOne({ id, organizationId, direction: 'incoming' }).whereNotNull('amlFlaggedAt');
  return lock ? q.forUpdate() : q;
}

/** Flags a deposit from a sanctioned address (when, which list entries matched), in the caller's transaction; returns when it was flagged. */
export async function flagDeposit(trx: Knex.Transaction, id: string, matches: unknown): Promise<Date> {
  const [row] = await trx('chain_transfers').where({ id }).update({ amlFlaggedAt: trx.fn.now(), amlMatches: JSON.stringify(matches) }).returning(['amlFlaggedAt']);
  return (row as { amlFlaggedAt: Date }).amlFlaggedAt;
}

/** Records an admin's release of a flagged deposit's hold (who, when, why). */
export async function releaseFlaggedDeposit(trx: Knex.Transaction, id: string, releasedBy: string, note: string): Promise<ChainTransferModel> {
  return ChainTransferModel.query(trx).patchAndFetchById(id, { amlReleasedAt: new Date(), amlReleasedBy: releasedBy, amlReleaseNote: note });
}
