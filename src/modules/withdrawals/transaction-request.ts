import { ethers } from 'ethers';

const erc20 = new ethers.Interface(['function transfer(address to, uint256 amount) returns (bool)']);

/** The call that moves `rawAmount` of an asset to `recipient`: a value transfer or ERC-20 transfer(). */
export function transactionRequest(asset: { isNative: boolean; address: string }, recipient: string, rawAmount: bigint): { to: string; value: bigint; data: string } {
  if (asset.isNative) return { to: recipient, value: rawAmount, data: '0x' };
  return { to: asset.address, value: 0n, data: erc20.encodeFunctionData('transfer', [recipient, rawAmount]) };
}

/** A line that is a contract call (a DEX approval or swap) carries it; a plain send has none. */
export interface LineCall {
  callTo: string | null;
  callData: string | null;
  callValue: string | null;
}

/** What a transfer line signs: its own contract call when it has one, else the send of its amount. */
export function lineRequest(asset: { isNative: boolean; address: string }, line: LineCall & { recipient: string; rawAmount: string }): { to: string; value: bigint; data: string } {
  if (line.callTo) return { to: line.callTo, value: BigInt(line.callValue ?? 0), data: line.callData ?? '0x' };
  return transactionRequest(asset, line.recipient, BigInt(line.rawAmount));
}
