/**
 * A real Uniswap V2 on a dev chain: WETH9, the factory and Router02 deployed unmodified from the
 * compiled artefacts the `@uniswap/v2-core` and `@uniswap/v2-periphery` packages ship (nothing
 * downloaded, nothing compiled), and pools seeded between the native coin and the test tokens.
 */
import { ethers } from 'ethers';
import { devChainAccount } from './dev-accounts';
import { senderKey, serialized, withWallet } from './dev-sender';
import type { TestToken } from './test-tokens';

export interface DexDeployment {
  weth: string;
  factory: string;
  router: string;
}

interface Artefact {
  abi: ethers.InterfaceAbi;
  bytecode: string;
}

function artefact(module: string): Artefact {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const json = require(module) as { abi: ethers.InterfaceAbi; bytecode: string };
  return { abi: json.abi, bytecode: json.bytecode.startsWith('0x') ? json.bytecode : `0x${json.bytecode}` };
}

export const dexArtefacts = {
  weth: () => artefact('@uniswap/v2-periphery/build/WETH9.json'),
  factory: () => artefact('@uniswap/v2-core/build/UniswapV2Factory.json'),
  router: () => artefact('@uniswap/v2-periphery/build/UniswapV2Router02.json'),
};

/**
 * The DEX has a deployer of its own (dev account #9) that sends nothing else, so WETH, the factory
 * and the router are always its nonces 0, 1 and 2: the same addresses on every fresh dev chain,
 * whatever account #0 (the faucet) has sent.
 */
export const DEX_DEPLOYER_INDEX = 9;

export function predictDexAddresses(deployer = devChainAccount(DEX_DEPLOYER_INDEX).address): DexDeployment {
  const [weth, factory, router] = [0, 1, 2].map((nonce) => ethers.getCreateAddress({ from: deployer, nonce }));
  return { weth, factory, router };
}

/** Pools seeded at start: the native coin at 2,000 of each stablecoin, stablecoins at par. Whole units. */
export const DEX_SEED_POOLS: readonly { a: string; b: string; amountA: string; amountB: string }[] = [
  { a: 'ETH', b: 'USDC', amountA: '10000', amountB: '20000000' },
  { a: 'ETH', b: 'USDT', amountA: '10000', amountB: '20000000' },
  { a: 'ETH', b: 'DAI', amountA: '10000', amountB: '20000000' },
  { a: 'USDC', b: 'DAI', amountA: '10000000', amountB: '10000000' },
  { a: 'USDC', b: 'USDT', amountA: '10000000', amountB: '10000000' },
];

const ROUTER_ABI = [
  'function factory() view returns (address)',
  'function WETH() view returns (address)',
  'function addLiquidity(address tokenA, address tokenB, uint amountADesired, uint amountBDesired, uint amountAMin, uint amountBMin, address to, uint deadline) returns (uint, uint, uint)',
  'function addLiquidityETH(address token, uint amountTokenDesired, uint amountTokenMin, uint amountETHMin, address to, uint deadline) payable returns (uint, uint, uint)',
];
const FACTORY_ABI = ['function getPair(address, address) view returns (address)'];
const ERC20_ABI = ['function approve(address spender, uint256 amount) returns (bool)'];

/**
 * Deploys the DEX (idempotent: contracts already at their addresses are kept) and seeds every pool
 * of DEX_SEED_POOLS that does not exist yet from the test tokens' owner (account #0, which holds
 * their supply). `liquidityKey` is that owner's key.
 */
export async function deployDex(rpcUrl: string, liquidityKey: string, tokens: TestToken[]): Promise<DexDeployment> {
  const deployer = devChainAccount(DEX_DEPLOYER_INDEX);
  const addresses = predictDexAddresses(deployer.address);
  await withWallet(rpcUrl, deployer.privateKey, (wallet) =>
    serialized(senderKey(rpcUrl, wallet.address), async () => {
      const p = wallet.provider as ethers.JsonRpcProvider;
      const codes = await Promise.all([addresses.weth, addresses.factory, addresses.router].map((a) => p.getCode(a)));
      const present = codes.filter((c) => c !== '0x').length;
      if (present === 3) return;
      if (present > 0 || (await p.getTransactionCount(wallet.address, 'pending')) !== 0) {
        throw new Error(`deployDex: the DEX deployer ${wallet.address} has sent other transactions; its contracts are not where they should be`);
      }
      const deploy = async (a: Artefact, nonce: number, ...args: unknown[]) => {
        const tx = await new ethers.ContractFactory(a.abi, a.bytecode, wallet).getDeployTransaction(...args);
        return wallet.sendTransaction({ ...tx, nonce, gasLimit: 6_000_000n });
      };
      const sent = [
        await deploy(dexArtefacts.weth(), 0),
        await deploy(dexArtefacts.factory(), 1, wallet.address),
        await deploy(dexArtefacts.router(), 2, addresses.factory, addresses.weth),
      ];
      const receipts = await Promise.all(sent.map((t) => t.wait()));
      if (receipts.some((r) => r?.status !== 1)) throw new Error('deployDex: a DEX deployment reverted');
    }),
  );
  await seedPools(rpcUrl, liquidityKey, addresses, tokens);
  return addresses;
}

async function seedPools(rpcUrl: string, key: string, dex: DexDeployment, tokens: TestToken[]): Promise<void> {
  await withWallet(rpcUrl, key, (wallet) =>
    serialized(senderKey(rpcUrl, wallet.address), async () => {
      const factory = new ethers.Contract(dex.factory, FACTORY_ABI, wallet);
      const router = new ethers.Contract(dex.router, ROUTER_ABI, wallet);
      const bySymbol = new Map(tokens.map((t) => [t.symbol, t]));
      const addressOf = (s: string) => (s === 'ETH' ? dex.weth : bySymbol.get(s)?.address);
      const approved = new Set<string>();
      let nonce = await wallet.provider!.getTransactionCount(wallet.address, 'pending');
      const sent: ethers.TransactionResponse[] = [];
      const deadline = Math.floor(Date.now() / 1000) + 3600;
      for (const pool of DEX_SEED_POOLS) {
        const [a, b] = [addressOf(pool.a), addressOf(pool.b)];
        if (!a || !b) continue;
        if ((await factory.getPair(a, b)) !== ethers.ZeroAddress) continue;
        for (const s of [pool.a, pool.b]) {
          if (s === 'ETH' || approved.has(s)) continue;
          approved.add(s);
          sent.push(await new ethers.Contract(bySymbol.get(s)!.address, ERC20_ABI, wallet).approve(dex.router, ethers.MaxUint256, { nonce: nonce++ }));
        }
        const units = (s: string, amount: string) => ethers.parseUnits(amount, s === 'ETH' ? 18 : bySymbol.get(s)!.decimals);
        if (pool.a === 'ETH') {
          sent.push(await router.addLiquidityETH(b, units(pool.b, pool.amountB), 0, 0, wallet.address, deadline, { value: units('ETH', pool.amountA), nonce: nonce++, gasLimit: 5_000_000n }));
        } else {
          sent.push(await router.addLiquidity(a, b, units(pool.a, pool.amountA), units(pool.b, pool.amountB), 0, 0, wallet.address, deadline, { nonce: nonce++, gasLimit: 5_000_000n }));
        }
      }
      const receipts = await Promise.all(sent.map((t) => t.wait()));
      if (receipts.some((r) => r?.status !== 1)) throw new Error('deployDex: seeding a pool reverted');
    }),
  );
}
