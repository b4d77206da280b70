import type { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { ChainNetwork } from '../chains/chain-networks';
import { isNftStandard } from '../chains/nft-standards';
import { readNftBalance } from '../chains/nft-reader';
import type { PricedLine } from './transfer.domain';
import { OPEN_ITEM_STATUSES } from './transfer.domain';

/**
 * The NFT lines of a send must be covered by what the address holds on chain now (ownerOf /
 * balanceOf), less every line of the same token already on its way out: an ERC-721 cannot be
 * queued twice, an ERC-1155 id not beyond its balance. INSUFFICIENT_FUNDS names the line.
 */
export async function ensureNftsHeld(db: Knex | Knex.Transaction, address: string, network: ChainNetwork, lines: PricedLine[]): Promise<void> {
  const wanted = new Map<string, { line: PricedLine; index: number; total: bigint }>();
  lines.forEach((l, index) => {
    if (l.tokenId === undefined) return;
    const key = `${l.asset.id}:${l.tokenId}`;
    const seen = wanted.get(key);
    wanted.set(key, { line: l, index: seen?.index ?? index, total: (seen?.total ?? 0n) + l.rawAmount });
  });
  for (const { line, index, total } of wanted.values()) {
    if (!isNftStandard(line.asset.standard)) continue;
    const tokenId = line.tokenId!;
    const [held, inFlight] = await Promise.all([readNftBalance(network.provider, address, { address: line.asset.address, standard: line.asset.standard }, tokenId), nftInFlight(db, address, network.blockchainId, line.asset.id, tokenId)]);
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

/** How many of one NFT lines not yet final are sending from the address. */
async function nftInFlight(db: Knex | Knex.Transaction, address: string, blockchainId: string, assetId: string, tokenId: bigint): Promise<bigint> {
  const row: { total: string | null } | undefined = await db('transfer_items as i')
    .join('transfers as t', 't.id', 'i.transferId')
    .where({ 't.fromAddress': address, 't.blockchainId': blockchainId, 'i.assetId': assetId, 'i.tokenId': tokenId.toString() })
    .whereIn('i.status', OPEN_ITEM_STATUSES)
    .first(db.raw('sum(i.raw_amount)::text as total'));
  return BigInt(row?.total ?? 0);
}
