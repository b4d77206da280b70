import type { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { ChainNetwork, AssetView } from '../chains';
import { isNftStandard } from '../chains';
import { stillInBalance } from './in-flight';
import { lockUntilCommit } from '../../platform/db/advisory-lock';

/** What the NFT guard reads of a line: the collection, the token id (absent on a fungible line) and how many. */
export interface NftLine {
  asset: AssetView;
  rawAmount: bigint;
  tokenId?: bigint;
}

/**
 * The NFT lines of a send must be covered by what the address holds on chain now (ownerOf /
 * balanceOf), less every line of the same token already on its way out: an ERC-721 cannot be
 * queued twice, an ERC-1155 id not beyond its balance. INSUFFICIENT_FUNDS names the line.
 */
export async function ensureNftsHeld(db: Knex | Knex.Transaction, address: string, network: ChainNetwork, lines: NftLine[]): Promise<void> {
  const wanted = new Map<string, { line: NftLine; index: number; total: bigint }>();
  lines.forEach((l, index) => {
    if (l.tokenId === undefined) return;
    const key = `${l.asset.id}:${l.tokenId}`;
    const seen = wanted.get(key);
    wanted.set(key, { line: l, index: seen?.index ?? index, total: (seen?.total ?? 0n) + l.rawAmount });
  });
  for (const { line, index, total } of wanted.values()) {
    if (!isNftStandard(line.asset.standard)) continue;
    const tokenId = line.tokenId!;
    const [held, inFlight] = await Promise.all([network.port.balance(address, { kind: 'nft', address: line.asset.address, standard: line.asset.standard, tokenId }), nftInFlight(db, address, network.blockchainId, line.asset.id, tokenId)]);
    if (held < total + inFlight) {
      throw new KeelError('INSUFFICIENT_FUNDS', `${address} holds ${held} of ${line.asset.symbol} #${tokenId}; this transfer and those in flight need ${total + inFlight}`, {
        fields: [{ field: `assets.${index}.tokenId`, error: 'INSUFFICIENT_FUNDS' }],
        assetId: line.asset.id,
        tokenId: tokenId.toString(),
        available: held.toString(),
        required: (total + inFlight).toString(),
      });
    }
  }
}

/**
 * ensureNftsHeld again inside the transaction that records the lines, under a transaction-scoped
 * advisory lock per (address, collection, token id), taken in a fixed order: of two requests for the
 * same token at once, the second waits for the first to commit, then sees its line in flight. The
 * check before the transaction answers early; this one makes it hold under concurrency.
 */
export async function holdNfts(trx: Knex.Transaction, address: string, network: ChainNetwork, lines: NftLine[]): Promise<void> {
  const nft = lines.filter((l) => l.tokenId !== undefined);
  if (!nft.length) return;
  await lockUntilCommit(trx, nft.map((l) => `nft-send:${network.blockchainId}:${address.toLowerCase()}:${l.asset.id}:${l.tokenId}`));
  await ensureNftsHeld(trx, address, network, lines);
}

/** How many of one NFT the address's lines still hold but will send (stillInBalance). */
async function nftInFlight(db: Knex | Knex.Transaction, address: string, blockchainId: string, assetId: string, tokenId: bigint): Promise<bigint> {
  const row: { total: string | null } | undefined = await db('transfer_items as i')
    .join('transfers as t', 't.id', 'i.transferId')
    .where({ 't.fromAddress': address, 't.blockchainId': blockchainId, 'i.assetId': assetId, 'i.tokenId': tokenId.toString() })
    .modify(stillInBalance)
    .first(db.raw('sum(i.raw_amount)::text as total'));
  return BigInt(row?.total ?? 0);
}
