import { ethers } from 'ethers';

const erc20 = new ethers.Interface(['function transfer(address to, uint256 amount) returns (bool)']);
const nfts = new ethers.Interface([
  'function safeTransferFrom(address from, address to, uint256 tokenId)',
  'function safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes data)',
]);

/** What moves an NFT: the sending address and the token id (the asset's standard says which call). */
export interface NftMove {
  from: string;
  tokenId: bigint;
}

/**
 * The call that moves `rawAmount` of an asset to `recipient`: a value transfer, ERC-20 transfer(),
 * or for an NFT collection safeTransferFrom (ERC-721 the token; ERC-1155 `rawAmount` of the id).
 */
export function transactionRequest(asset: { isNative: boolean; address: string; standard?: string }, recipient: string, rawAmount: bigint, nft?: NftMove): { to: string; value: bigint; data: string } {
  if (asset.isNative) return { to: recipient, value: rawAmount, data: '0x' };
  if (nft && asset.standard === 'ERC721') return { to: asset.address, value: 0n, data: nfts.encodeFunctionData('safeTransferFrom(address,address,uint256)', [nft.from, recipient, nft.tokenId]) };
  if (nft && asset.standard === 'ERC1155') return { to: asset.address, value: 0n, data: nfts.encodeFunctionData('safeTransferFrom(address,address,uint256,uint256,bytes)', [nft.from, recipient, nft.tokenId, rawAmount, '0x']) };
  if (nft) throw new Error(`transactionRequest: ${asset.address} is not an NFT collection`);
  return { to: asset.address, value: 0n, data: erc20.encodeFunctionData('transfer', [recipient, rawAmount]) };
}

/** A line that is a contract call (a DEX approval or swap) carries it; a plain send has none. */
export interface LineCall {
  callTo: string | null;
  callData: string | null;
  callValue: string | null;
}

/** What a transfer line signs: its own contract call when it has one, else the send of its amount. */
export function lineRequest(asset: { isNative: boolean; address: string; standard: string }, line: LineCall & { recipient: string; rawAmount: string; fromAddress: string; tokenId: string | null }): { to: string; value: bigint; data: string } {
  if (line.callTo) return { to: line.callTo, value: BigInt(line.callValue ?? 0), data: line.callData ?? '0x' };
  const nft = line.tokenId === null ? undefined : { from: line.fromAddress, tokenId: BigInt(line.tokenId) };
  return transactionRequest(asset, line.recipient, BigInt(line.rawAmount), nft);
}
