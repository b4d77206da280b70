import { ethers } from 'ethers';
import { nodeRefused } from '../../platform/chain-port/evm-transactions';
import { KeelError } from '../../platform/errors';
import type { ChainNetwork } from '../chains';

/** An asset as the DEX sees it: a token, or the native coin (routed through WETH). */
export interface DexAsset {
  id: string;
  symbol: string;
  decimals: number;
  isNative: boolean;
  address: string;
}

export type SwapOrder = 'FASTEST' | 'CHEAPEST' | 'RECOMMENDED' | 'NO_SLIPPAGE';
export const SWAP_ORDERS: readonly SwapOrder[] = ['FASTEST', 'CHEAPEST', 'RECOMMENDED', 'NO_SLIPPAGE'];

/** Uniswap V2 takes 0.3% of each hop's input. */
const POOL_FEE_PER_MILLE = 3n;
/** Gas a swap costs on Uniswap V2, measured on the dev chain and rounded up: first hop, each further hop, native in or out. */
const SWAP_GAS_FIRST_HOP = 130_000n;
const SWAP_GAS_PER_EXTRA_HOP = 70_000n;
const SWAP_GAS_NATIVE = 20_000n;
export const APPROVAL_GAS = 50_000n;

const ROUTER = new ethers.Interface([
  'function factory() view returns (address)',
  'function WETH() view returns (address)',
  'function getAmountsOut(uint amountIn, address[] path) view returns (uint[] amounts)',
  'function swapExactTokensForTokens(uint amountIn, uint amountOutMin, address[] path, address to, uint deadline) returns (uint[] amounts)',
  'function swapExactETHForTokens(uint amountOutMin, address[] path, address to, uint deadline) payable returns (uint[] amounts)',
  'function swapExactTokensForETH(uint amountIn, uint amountOutMin, address[] path, address to, uint deadline) returns (uint[] amounts)',
]);
const FACTORY = new ethers.Interface(['function getPair(address, address) view returns (address)']);
const PAIR = new ethers.Interface([
  'function getReserves() view returns (uint112, uint112, uint32)',
  'function token0() view returns (address)',
  'event Swap(address indexed sender, uint amount0In, uint amount1In, uint amount0Out, uint amount1Out, address indexed to)',
]);
const ERC20 = new ethers.Interface(['function approve(address spender, uint256 amount) returns (bool)', 'function allowance(address owner, address spender) view returns (uint256)']);

/** One way through the pools: the assets in order (the native coin stands for WETH) and what comes out. */
export interface DexRoute {
  assets: DexAsset[];
  /** Token addresses the router is given (WETH for the native coin). */
  path: string[];
  amounts: bigint[];
  output: bigint;
  gasLimit: bigint;
}

export interface DexQuote {
  route: DexRoute;
  /** 1 - output / (what the pools' current prices, less fees, would give): in parts per million. */
  priceImpactPpm: bigint;
  /** The pools' fees, in the input asset's base units. */
  feeRaw: bigint;
}

/**
 * Reads a chain's Uniswap V2 deployment: routes (direct, or through one intermediate asset: WETH
 * or another registered token), their outputs from the router's own getAmountsOut, the pools'
 * reserves for price impact, and the calls that approve and swap.
 */
export class DexQuoter {
  private readonly wethByRouter = new Map<string, Promise<{ weth: string; factory: string }>>();
  /** Pair contracts by factory and tokens: a pair's address never changes once created. */
  private readonly pairs = new Map<string, { pair: string; token0: string }>();

  router(network: ChainNetwork): string {
    const router = network.spec.dex?.router;
    if (!router) throw new KeelError('INVALID_NETWORK', `No DEX is configured on ${network.spec.name} (set dex.router in KEEL_CHAINS)`);
    return router;
  }

  private async contracts(network: ChainNetwork): Promise<{ weth: string; factory: string }> {
    const router = this.router(network);
    let known = this.wethByRouter.get(router);
    if (!known) {
      known = (async () => {
        const [weth, factory] = await Promise.all([call<string>(network, router, ROUTER, 'WETH', []), call<string>(network, router, ROUTER, 'factory', [])]);
        return { weth, factory };
      })();
      known.catch(() => this.wethByRouter.delete(router));
      this.wethByRouter.set(router, known);
    }
    return known;
  }

  /** Every route from `from` to `to` with pools deep enough to quote, best output first. */
  async routes(network: ChainNetwork, from: DexAsset, to: DexAsset, amountIn: bigint, intermediates: DexAsset[]): Promise<DexRoute[]> {
    const { weth } = await this.contracts(network);
    const router = this.router(network);
    const tokenOf = (a: DexAsset) => (a.isNative ? weth : a.address);
    const candidates: DexAsset[][] = [[from, to], ...intermediates.filter((m) => tokenOf(m) !== tokenOf(from) && tokenOf(m) !== tokenOf(to)).map((m) => [from, m, to])];
    const quoted = await Promise.all(
      candidates.map(async (assets) => {
        const path = assets.map(tokenOf);
        // A route the router refuses (no pair, no liquidity) is no route; a node that does not answer is no answer.
        const amounts = await call<bigint[]>(network, router, ROUTER, 'getAmountsOut', [amountIn, path]).catch((e: unknown) => {
          if (nodeRefused(e)) return null;
          throw new KeelError('UPSTREAM_ERROR', `${network.spec.name}'s node did not answer the DEX quote; try again shortly`);
        });
        if (!amounts) return null;
        const hops = BigInt(path.length - 1);
        const gasLimit = SWAP_GAS_FIRST_HOP + SWAP_GAS_PER_EXTRA_HOP * (hops - 1n) + (from.isNative || to.isNative ? SWAP_GAS_NATIVE : 0n);
        const output = amounts[amounts.length - 1];
        return output > 0n ? { assets, path, amounts: [...amounts], output, gasLimit } : null;
      }),
    );
    return quoted.filter((r): r is DexRoute => r !== null).sort((a, b) => (b.output > a.output ? 1 : b.output < a.output ? -1 : 0));
  }

  /** Price impact and fees of a route, from its pools' reserves. */
  async describe(network: ChainNetwork, route: DexRoute): Promise<DexQuote> {
    const { factory } = await this.contracts(network);
    // What the input would buy at the pools' current prices, after their fees, with no depth effect.
    const hopsReserves = await Promise.all(
      route.path.slice(0, -1).map(async (a, i) => {
        const { pair, token0 } = await this.pair(network, factory, a, route.path[i + 1]);
        const [r0, r1] = await call<bigint[]>(network, pair, PAIR, 'getReserves', []);
        return token0.toLowerCase() === a.toLowerCase() ? [r0, r1] : [r1, r0];
      }),
    );
    let ideal = route.amounts[0] * 10n ** 18n;
    for (const [rIn, rOut] of hopsReserves) ideal = (ideal * (1000n - POOL_FEE_PER_MILLE) * rOut) / (1000n * rIn);
    const idealOut = ideal / 10n ** 18n;
    const priceImpactPpm = idealOut > 0n && idealOut > route.output ? ((idealOut - route.output) * 1_000_000n) / idealOut : 0n;
    const hops = route.path.length - 1;
    const keptPerMille = (1000n - POOL_FEE_PER_MILLE) ** BigInt(hops);
    const feeRaw = route.amounts[0] - (route.amounts[0] * keptPerMille) / 1000n ** BigInt(hops);
    return { route, priceImpactPpm, feeRaw };
  }

  private async pair(network: ChainNetwork, factory: string, a: string, b: string): Promise<{ pair: string; token0: string }> {
    const key = `${factory}|${[a, b].map((x) => x.toLowerCase()).sort().join('|')}`;
    let known = this.pairs.get(key);
    if (!known) {
      const pair = await call<string>(network, factory, FACTORY, 'getPair', [a, b]);
      known = { pair, token0: await call<string>(network, pair, PAIR, 'token0', []) };
      this.pairs.set(key, known);
    }
    return known;
  }

  async allowance(network: ChainNetwork, token: string, owner: string): Promise<bigint> {
    return call<bigint>(network, token, ERC20, 'allowance', [owner, this.router(network)]);
  }

  approveCall(network: ChainNetwork, token: string, amount: bigint): { to: string; data: string; value: bigint } {
    return { to: token, data: ERC20.encodeFunctionData('approve', [this.router(network), amount]), value: 0n };
  }

  /** The router call that swaps exactly `amountIn` along `path` and reverts unless at least `minOut` reaches `to`. */
  swapCall(network: ChainNetwork, route: DexRoute, amountIn: bigint, minOut: bigint, to: string, deadline: number): { to: string; data: string; value: bigint } {
    const router = this.router(network);
    const [from, dest] = [route.assets[0], route.assets[route.assets.length - 1]];
    if (from.isNative) return { to: router, data: ROUTER.encodeFunctionData('swapExactETHForTokens', [minOut, route.path, to, deadline]), value: amountIn };
    if (dest.isNative) return { to: router, data: ROUTER.encodeFunctionData('swapExactTokensForETH', [amountIn, minOut, route.path, to, deadline]), value: 0n };
    return { to: router, data: ROUTER.encodeFunctionData('swapExactTokensForTokens', [amountIn, minOut, route.path, to, deadline]), value: 0n };
  }

  /** The same router swap call (input, path, recipient) with another minimum output and deadline. */
  withTerms(data: string, minOut: bigint, deadline: number): string {
    const call = parseSwapCall(data);
    const args = [...call.args];
    args[args.length - 4] = minOut; // amountOutMin sits before path, to and deadline in all three forms
    args[args.length - 1] = deadline;
    return ROUTER.encodeFunctionData(call.fragment, args);
  }

  /** What the router would give now for `amountIn` along the swap call's path. */
  async currentOutput(network: ChainNetwork, data: string, amountIn: bigint): Promise<bigint> {
    const path = parseSwapCall(data).args.path as string[];
    const amounts = await call<bigint[]>(network, this.router(network), ROUTER, 'getAmountsOut', [amountIn, [...path]]);
    return amounts[amounts.length - 1];
  }

  /** What a mined swap delivered: the output of the last pool's Swap event. */
  static outputOf(receipt: ethers.TransactionReceipt): bigint | null {
    let output: bigint | null = null;
    for (const log of receipt.logs) {
      const parsed = (() => {
        try {
          return PAIR.parseLog({ topics: [...log.topics], data: log.data });
        } catch {
          return null;
        }
      })();
      if (parsed?.name === 'Swap') output = (parsed.args.amount0Out as bigint) + (parsed.args.amount1Out as bigint);
    }
    return output;
  }
}

function parseSwapCall(data: string): ethers.TransactionDescription {
  const parsed = ROUTER.parseTransaction({ data });
  if (!parsed || !parsed.name.startsWith('swapExact')) throw new Error('not a router swap call');
  return parsed;
}

async function call<T>(network: ChainNetwork, to: string, iface: ethers.Interface, fn: string, args: unknown[]): Promise<T> {
  const data = await network.provider.call({ to, data: iface.encodeFunctionData(fn, args) });
  const decoded = iface.decodeFunctionResult(fn, data);
  return (decoded.length === 1 ? decoded[0] : decoded) as T;
}
