import type { Knex } from 'knex';

/* A queued transfer's items, as modules that queue through TransferService amend them, in the caller's transaction: the transfer_items table is this module's. */

/** Makes an item wait for another to be sent first. */
export async function setItemPredecessor(trx: Knex | Knex.Transaction, itemId: string, afterItemId: string): Promise<void> {
  await trx('transfer_items').where({ id: itemId }).update({ afterItemId });
}

/** An item's contract call data (null for a plain transfer); undefined when no item has this id. */
export async function itemCallData(trx: Knex | Knex.Transaction, itemId: string): Promise<string | null | undefined> {
  const item = await trx('transfer_items').where({ id: itemId }).first('callData');
  return item?.callData;
}

/** Replaces an item's contract call data (a call re-priced before it is sent). */
export async function setItemCallData(trx: Knex | Knex.Transaction, itemId: string, callData: string): Promise<void> {
  await trx('transfer_items').where({ id: itemId }).update({ callData });
}
