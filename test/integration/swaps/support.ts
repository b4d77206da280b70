import { ethers } from 'ethers';
import type { TestKeel, TestOrg } from '../../support/keel';
import { eventually } from '../../support/eventually';

export interface Asset {
  id: string;
  symbol: string;
  address: string;
  decimals: number;
  blockchainId: string;
}

export const FAST = { RATE_LIMIT_SCALE: 100, CHAIN_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 100, OUTBOX_POLL_INTERVAL_MS: 50, WEBHOOKS_ALLOW_PRIVATE_URLS: true };
const erc20 = new ethers.Interface(['function balanceOf(address) view returns (uint256)']);

export async function assetsOf(org: TestOrg, blockchainId: string): Promise<Record<string, Asset>> {
  const res = await org.core.request('GET', `/v1/assets?blockchainId=${blockchainId}&limit=100`);
  return Object.fromEntries(res.body.data.map((a: Asset) => [a.symbol, a]));
}

export async function createWallet(org: TestOrg, blockchainId: string, configurations?: object) {
  const res = await org.core.request('POST', '/v1/master-wallets', { body: { blockchainId, name: 'Treasury', configurations } });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; walletAddress: string; name: string };
}

/** Sends from the faucet; with `confirmed`, waits until Keel has recorded the deposit. */
export async function fund(t: TestKeel, org: TestOrg, blockchainId: string, address: string, amount: string, asset?: string, confirmed = true): Promise<string> {
  const res = await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId, address, amount, asset } });
  expect(res.status).toBe(200);
  const txHash = res.body.data.txHash as string;
  if (confirmed) await eventually(async () => (await t.keel.platform.db('chain_transfers').where({ txHash, direction: 'incoming' }).first()) !== undefined, 30_000);
  return txHash;
}

export function balanceReader(provider: ethers.JsonRpcProvider, assets: Record<string, Asset>) {
  return async (symbol: string, owner: string): Promise<bigint> =>
    symbol === 'ETH' ? provider.getBalance(owner) : (erc20.decodeFunctionResult('balanceOf', await provider.call({ to: assets[symbol].address, data: erc20.encodeFunctionData('balanceOf', [owner]) }))[0] as bigint);
}

export const randomAddress = () => ethers.Wallet.createRandom().address;
