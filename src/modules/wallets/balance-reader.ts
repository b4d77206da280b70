import { ethers } from 'ethers';

const ERC20_READ_ABI = [
  'function balanceOf(address owner) view returns (uint256)',
  'function symbol() view returns (string)',
  'function name() view returns (string)',
  'function decimals() view returns (uint8)',
];
export const erc20Reader = new ethers.Interface(ERC20_READ_ABI);

export interface BalanceAsset {
  isNative: boolean;
  address: string;
}

/** The owner's balance of each asset (native or ERC20), in the smallest unit, read in parallel. */
export async function readBalances(provider: ethers.Provider, owner: string, assets: BalanceAsset[]): Promise<bigint[]> {
  return Promise.all(
    assets.map((a) => (a.isNative ? provider.getBalance(owner) : (new ethers.Contract(a.address, erc20Reader, provider).balanceOf(owner) as Promise<bigint>))),
  );
}

export interface TokenFacts {
  symbol: string;
  name: string;
  decimals: number;
}

/** What an unregistered token says about itself; null when the address is not an ERC20. */
export async function readTokenFacts(provider: ethers.Provider, address: string): Promise<TokenFacts | null> {
  const token = new ethers.Contract(address, erc20Reader, provider);
  try {
    const [symbol, name, decimals] = await Promise.all([token.symbol() as Promise<string>, token.name() as Promise<string>, token.decimals() as Promise<bigint>]);
    return { symbol, name, decimals: Number(decimals) };
  } catch {
    return null;
  }
}
