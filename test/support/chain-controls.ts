/**
 * Hardhat dev chain controls that only tests and benchmarks use: snapshots, reverts (reorgs), mining
 * on demand, automine and balances set behind Keel's back.
 */
import { ethers } from 'ethers';
import { rpc } from '../../src/platform/chain/json-rpc';

/** evm_snapshot: an id to revert to. Hardhat snapshot ids are single-use. */
export function snapshot(rpcUrl: string): Promise<string> {
  return rpc<string>(rpcUrl, 'evm_snapshot');
}

/** evm_revert: drops every block (and pending tx) after the snapshot; throws if the id is unknown. */
export async function revert(rpcUrl: string, id: string): Promise<void> {
  const ok = await rpc<boolean>(rpcUrl, 'evm_revert', [id]);
  if (ok !== true) throw new Error(`evm_revert at ${rpcUrl}: unknown or already used snapshot ${id}`);
}

/** hardhat_mine: mines `blocks` blocks at once (pending transactions go into the first). */
export async function mine(rpcUrl: string, blocks = 1): Promise<void> {
  if (!Number.isSafeInteger(blocks) || blocks < 1) throw new Error(`mine: invalid block count ${blocks}`);
  await rpc(rpcUrl, 'hardhat_mine', [ethers.toQuantity(blocks)]);
}

/**
 * Mines empty blocks until the head is at `height`: a chain rewound below a recorded block reads to
 * Keel as a node that is behind it (waited for), and as a reorganisation once it grows past it.
 */
export async function mineTo(rpcUrl: string, height: number): Promise<void> {
  // One block a call: blocks Hardhat mines several at a time after an evm_revert may name a parent
  // of the abandoned branch (block n+1 not following block n), which reads as the chain moving.
  for (let head = Number(await rpc<string>(rpcUrl, 'eth_blockNumber')); head < height; head++) await mine(rpcUrl, 1);
}

/** hardhat_setNextBlockBaseFeePerGas: the next block's base fee (a transaction mined in it pays what it paid at that fee before). */
export async function setNextBaseFee(rpcUrl: string, wei: bigint): Promise<void> {
  await rpc(rpcUrl, 'hardhat_setNextBlockBaseFeePerGas', [ethers.toQuantity(wei)]);
}

/** evm_setAutomine: with automine off, transactions wait in the mempool for interval mining or mine(). */
export async function setAutomine(rpcUrl: string, on: boolean): Promise<void> {
  await rpc(rpcUrl, 'evm_setAutomine', [on]);
}

/** Runs `steps` with automine off (transactions wait in the mempool until mined), turning it back on however they end. */
export async function withoutAutomine<T>(rpcUrl: string, steps: () => Promise<T>): Promise<T> {
  await setAutomine(rpcUrl, false);
  try {
    return await steps();
  } finally {
    await setAutomine(rpcUrl, true);
  }
}

/** hardhat_setBalance: the address's native balance becomes `wei`, with no transaction Keel could see. */
export async function setBalance(rpcUrl: string, address: string, wei: bigint): Promise<void> {
  await rpc(rpcUrl, 'hardhat_setBalance', [address, ethers.toQuantity(wei)]);
}
