import { ethers } from 'ethers';

const erc20 = new ethers.Interface(['function transfer(address to, uint256 amount) returns (bool)']);

/** The call that moves `rawAmount` of an asset to `recipient`: a value transfer or ERC-20 transfer(). */
export function transactionRequest(asset: { isNative: boolean; address: string }, recipient: string, rawAmount: bigint): { to: string; value: bigint; data: string } {
  if (asset.isNative) return { to: recipient, value: rawAmount, data: '0x' };
  return { to: asset.address, value: 0n, data: erc20.encodeFunctionData('transfer', [recipient, rawAmount]) };
}
