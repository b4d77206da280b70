/**
 * The NFT standards Keel follows. A collection is an asset of the registry with `standard` ERC721 or
 * ERC1155 and decimals 0; everything that reads or moves fungible value (balances, sweeps, the
 * ledger, swaps, checkouts) leaves these assets alone.
 */
export const NFT_STANDARDS = ['ERC721', 'ERC1155'] as const;
export type NftStandard = (typeof NFT_STANDARDS)[number];

export function isNftStandard(standard: string): standard is NftStandard {
  return (NFT_STANDARDS as readonly string[]).includes(standard);
}

/** The transaction category an NFT standard's transfers are recorded with. */
export function nftCategory(standard: NftStandard): 'erc721' | 'erc1155' {
  return standard === 'ERC721' ? 'erc721' : 'erc1155';
}
