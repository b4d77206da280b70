import type { Knex } from 'knex';
import { AssetModel } from './chain.model';

/** Assets by id, in the caller's connection or transaction: the assets table is this module's (the rest through ChainService). */
export async function assetsById(db: Knex | Knex.Transaction, ids: string[]): Promise<AssetModel[]> {
  return ids.length ? AssetModel.query(db).findByIds([...new Set(ids)]) : [];
}

/** An asset's symbol, or null when no asset has this id. */
export async function assetSymbol(db: Knex | Knex.Transaction, id: string): Promise<string | null> {
  const row = await AssetModel.query(db).findById(id).select('symbol');
  return row ? row.symbol : null;
}

/** A chain's assets, in the caller's connection or transaction. */
export async function assetsOfChain(db: Knex | Knex.Transaction, blockchainId: string): Promise<AssetModel[]> {
  return AssetModel.query(db).where({ blockchainId });
}
