import { ethers } from 'ethers';

const nftReader = new ethers.Interface([
  'function ownerOf(uint256 tokenId) view returns (address)',
  'function balanceOf(address owner, uint256 id) view returns (uint256)',
]);

/**
 * How many of one NFT `owner` holds on chain now: ERC-721 1 when ownerOf says so (0 for another
 * owner or a burnt id, whose ownerOf reverts), ERC-1155 balanceOf(owner, id).
 */
export async function readNftBalance(provider: ethers.Provider, owner: string, collection: { address: string; standard: 'ERC721' | 'ERC1155' }, tokenId: bigint): Promise<bigint> {
  const contract = new ethers.Contract(collection.address, nftReader, provider);
  if (collection.standard === 'ERC1155') return (await contract.balanceOf(owner, tokenId)) as bigint;
  try {
    return ((await contract.ownerOf(tokenId)) as string).toLowerCase() === owner.toLowerCase() ? 1n : 0n;
  } catch (e) {
    if ((e as { code?: string }).code === 'CALL_EXCEPTION') return 0n;
    throw e;
  }
}
