import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ethers } from 'ethers';
import { devChainAccount } from '../src/platform/chain/dev-accounts';
import { loadTestTokenArtifact } from '../src/platform/chain/test-tokens';
import { netTrades, NettableTrade } from '../src/modules/settlement/netting';
import { ChainDelta, deploySettlementContract, NATIVE_TOKEN, settleCalldata, settlementInterface } from '../src/modules/settlement/settlement-contract';
import { startOwnChain } from '../test/support/own-chain';
import { median } from './support';

const CHAIN_ID = 31_398;
const BASE = { id: 'ETH', decimals: 18 };
const QUOTE = { id: 'USDC', decimals: 6 };

/**
 * The settlement contract on a local Hardhat chain (automine), driven as Keel's batcher drives it:
 * trades between `wallets` accounts (random pairs, random side), netted per wallet and asset, one
 * settle() transaction per batch from the operator key.
 * - gasPerTrade: the settle transaction's gas used / trades in it (calldata, replay bitmap, netted
 *   balance updates; the 21,000 base included). Median of `runs` batches.
 * - tradesPerSecond: `runs` batches sent back to back (each signed and encoded here, the nonce
 *   counted locally) until the last receipt, trades / elapsed seconds.
 * By batch size (1, 10, 100, 1000, with min(10, 2 × size) wallets) and, at 1,000 trades, by wallets
 * touched (2, 10, 50, 100).
 * Args: runs (default 5).
 */
export async function run(args: string[]): Promise<object> {
  const runs = Number(args[0] ?? 5);
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-bench-settlement-'));
  const { chain, tokens } = await startOwnChain(CHAIN_ID, 1, dataDir);
  const provider = new ethers.JsonRpcProvider(chain.rpcUrl, CHAIN_ID, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 20 });
  try {
    const usdc = tokens.find((t) => t.symbol === 'USDC')!;
    const funder = new ethers.NonceManager(new ethers.Wallet(devChainAccount(0).privateKey, provider));
    const operator = new ethers.Wallet(devChainAccount(7).privateKey, provider);
    const { address } = await deploySettlementContract(funder, { operator: operator.address, feeRecipient: devChainAccount(8).address, exitDelaySeconds: 86_400 });

    // 100 accounts, each with 90 ETH and 1,000,000 USDC deposited in the contract.
    const accounts = Array.from({ length: 100 }, () => ethers.Wallet.createRandom().connect(provider));
    const token = new ethers.Contract(usdc.address, loadTestTokenArtifact().abi, funder);
    const funding = [];
    for (const a of accounts) {
      funding.push(await funder.sendTransaction({ to: a.address, value: ethers.parseEther('100') }));
      funding.push(await token.transfer(a.address, ethers.parseUnits('1000000', 6)));
    }
    await Promise.all(funding.map((tx) => tx.wait()));
    const settlement = settlementInterface();
    await Promise.all(
      accounts.map(async (a) => {
        const t = new ethers.Contract(usdc.address, loadTestTokenArtifact().abi, a);
        await (await t.approve(address, ethers.MaxUint256)).wait();
        await (await a.sendTransaction({ to: address, data: settlement.encodeFunctionData('deposit', [usdc.address, ethers.parseUnits('1000000', 6)]) })).wait();
        await (await a.sendTransaction({ to: address, value: ethers.parseEther('90'), data: settlement.encodeFunctionData('depositNative') })).wait();
      }),
    );

    let nextKey = 1n;
    let nonce = await provider.getTransactionCount(operator.address, 'pending');
    const fees = await provider.getFeeData();
    const batch = (size: number, wallets: number) => {
      const trades: NettableTrade[] = [];
      for (let i = 0; i < size; i++) {
        const maker = Math.floor(Math.random() * wallets);
        const taker = (maker + 1 + Math.floor(Math.random() * (wallets - 1))) % wallets;
        trades.push({ id: String(i), makerWalletId: String(maker), takerWalletId: String(taker), takerSide: Math.random() < 0.5 ? 'BUY' : 'SELL', quantity: '0.001', quoteAmount: '2', makerFee: '0.002', takerFee: '0.004', base: BASE, quote: QUOTE });
      }
      const deltas = netTrades(trades);
      const chainDeltas: ChainDelta[] = deltas.map((d) => ({ account: accounts[Number(d.walletId)].address, token: d.assetId === 'ETH' ? NATIVE_TOKEN : usdc.address, amount: d.amount }));
      const keys = trades.map(() => nextKey++);
      return { data: settleCalldata(crypto.randomUUID(), keys, chainDeltas), deltas: chainDeltas.length };
    };
    const send = async (data: string) =>
      provider.broadcastTransaction(await operator.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: nonce++, to: address, data, gasLimit: 16_000_000n, maxFeePerGas: fees.maxFeePerGas! * 4n, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! }));

    const measure = async (size: number, wallets: number) => {
      const gas: number[] = [];
      let deltas = 0;
      for (let r = 0; r < runs; r++) {
        const b = batch(size, wallets);
        deltas = b.deltas;
        const receipt = await (await send(b.data)).wait();
        if (receipt?.status !== 1) throw new Error('settle reverted');
        gas.push(Number(receipt.gasUsed));
      }
      const started = performance.now();
      const sent = [];
      for (let r = 0; r < runs; r++) sent.push(await send(batch(size, wallets).data));
      const receipts = await Promise.all(sent.map((tx) => tx.wait()));
      if (receipts.some((x) => x?.status !== 1)) throw new Error('settle reverted');
      const seconds = (performance.now() - started) / 1000;
      const gasPerBatch = median(gas);
      return { batchSize: size, wallets, deltasPerBatch: deltas, gasPerBatch, gasPerTrade: Math.round(gasPerBatch / size), tradesPerSecond: Math.round((size * runs) / seconds) };
    };

    const bySize = [];
    for (const size of [1, 10, 100, 1000]) bySize.push(await measure(size, Math.min(10, 2 * size)));
    const byWallets = [];
    for (const wallets of [2, 10, 50, 100]) byWallets.push(await measure(1000, wallets));
    return {
      benchmark: 'settlement',
      note: 'settle() on a local Hardhat chain (automine), ETH/USDC trades netted per wallet and asset; gas includes the 21,000 base cost',
      runs,
      anchors: { idexV1PerTrade: 140_000, uniswapV2Swap: 100_000, erc20Transfer: 48_000 },
      bySize,
      byWallets,
    };
  } finally {
    provider.destroy();
    await chain.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
