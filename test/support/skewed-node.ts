import { ethers } from 'ethers';

/**
 * A node as a provider reaches it, skewed from the chain's head: behind (it has no block above
 * `knows`, nor a receipt from one, and its head is there: a fallback, a restarted or load-balanced
 * node), or on another fork from `forkedAt` (other block hashes there), or with receipt lookups
 * alone behind (`receiptsKnow`).
 */
export class SkewedNode extends ethers.JsonRpcProvider {
  knows?: number;
  forkedAt?: number;
  /** Receipts only, lagging: none from a block above this (a load balancer's receipt lookups reaching a node behind the one serving blocks). */
  receiptsKnow?: number;

  constructor(rpcUrl: string, chainId: number) {
    super(rpcUrl, chainId, { staticNetwork: ethers.Network.from(chainId), cacheTimeout: -1 });
  }

  override async send(method: string, params: unknown[]): Promise<any> {
    if (method === 'eth_blockNumber' && this.knows !== undefined) return ethers.toQuantity(this.knows);
    if (method === 'eth_getTransactionReceipt') {
      const receipt = await super.send(method, params);
      const known = Math.min(this.knows ?? Infinity, this.receiptsKnow ?? Infinity);
      return receipt && Number(receipt.blockNumber) > known ? null : receipt;
    }
    if (method !== 'eth_getBlockByNumber') return super.send(method, params);
    const tag = params[0] === 'latest' && this.knows !== undefined ? ethers.toQuantity(this.knows) : params[0];
    if (!ethers.isHexString(tag)) return super.send(method, params);
    const height = Number(tag);
    if (this.knows !== undefined && height > this.knows) return null;
    const block = await super.send(method, [tag, ...params.slice(1)]);
    return block && this.forkedAt !== undefined && height >= this.forkedAt ? { ...block, hash: ethers.id(`another fork ${height}`) } : block;
  }
}
