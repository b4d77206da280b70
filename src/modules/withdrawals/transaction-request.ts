import { transactionRequest, type CallRequest } from '../../platform/chain-port/evm-transactions';

/** A line that is a contract call (a DEX approval or swap) carries it; a plain send has none. */
export interface LineCall {
  callTo: string | null;
  callData: string | null;
  callValue: string | null;
}

/** What a transfer line signs: its own contract call when it has one, else the send of its amount. */
export function lineRequest(asset: { isNative: boolean; address: string; standard: string }, line: LineCall & { recipient: string; rawAmount: string; fromAddress: string; tokenId: string | null }): CallRequest {
  if (line.callTo) return { to: line.callTo, value: BigInt(line.callValue ?? 0), data: line.callData ?? '0x' };
  const nft = line.tokenId === null ? undefined : { from: line.fromAddress, tokenId: BigInt(line.tokenId) };
  return transactionRequest(asset, line.recipient, BigInt(line.rawAmount), nft);
}
