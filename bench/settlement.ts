import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ethers } from 'ethers';
import { devChainAccount } from '../src/platform/chain/dev-accounts';
import { loadTestTokenArtifact } from '../src/platform/chain/test-tokens';
import { netTrades, NettableTrade } from '../src/modules/settlement/netting';
import { ChainDelta, ChainWithdrawal, deploySettlementContract, NATIVE_TOKEN, readTokenSlots, settleCalldata, settlementInterface, signWithdrawal, withdrawCalldata } from '../src/modules/settlement/settlement-contract';
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
 * - allIn: the gas of every transaction Keel's flow needs for a session of 10 batches among 10
 *   fresh wallets, divided by the session's trades: each wallet's deposits to trading (an ERC-20
 *   approval, the USDC deposit, the ETH deposit), the 10 settle() calls, and at the end each
 *   wallet's withdrawal of both balances (signed by the wallet, paid out in one operator
 *   transaction, as TradingWithdrawalSender sends the withdrawals waiting at a step).
 *   At batch 100 and 1,000, with settled trades per second at that size, the gas by kind of
 *   transaction (depositGas: approvals, token and native deposits) and per trade, and the all-in
 *   figure without the approvals (wallets that approved the contract in an earlier session).
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

    const where = await readTokenSlots(provider, address, [NATIVE_TOKEN, usdc.address]);
    let nextKey = 1n;
    let nextWithdrawalKey = 1n;
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
      return { data: settleCalldata(crypto.randomUUID(), keys, chainDeltas, where), deltas: chainDeltas.length };
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

    /** A session of 10 batches of `size` trades among 10 wallets that deposit first and withdraw everything at the end. */
    const allIn = async (size: number) => {
      const wallets = Array.from({ length: 10 }, () => ethers.Wallet.createRandom().connect(provider));
      const funded = [];
      for (const w of wallets) {
        funded.push(await funder.sendTransaction({ to: w.address, value: ethers.parseEther('100') }));
        funded.push(await token.transfer(w.address, ethers.parseUnits('1000000', 6)));
      }
      await Promise.all(funded.map((tx) => tx.wait()));
      const depositParts = { approvals: 0n, tokenDeposits: 0n, nativeDeposits: 0n };
      for (const w of wallets) {
        const t = new ethers.Contract(usdc.address, loadTestTokenArtifact().abi, w);
        for (const [part, tx] of [
          ['approvals', await t.approve(address, ethers.MaxUint256)],
          ['tokenDeposits', await w.sendTransaction({ to: address, data: settlement.encodeFunctionData('deposit', [usdc.address, ethers.parseUnits('1000000', 6)]) })],
          ['nativeDeposits', await w.sendTransaction({ to: address, value: ethers.parseEther('90'), data: settlement.encodeFunctionData('depositNative') })],
        ] as const) {
          const r = await tx.wait();
          if (r?.status !== 1) throw new Error('deposit reverted');
          depositParts[part] += r.gasUsed;
        }
      }
      const depositGas = depositParts.approvals + depositParts.tokenDeposits + depositParts.nativeDeposits;
      const local = accounts.splice(0, 10, ...wallets); // batch() draws its wallets from the first 10 accounts
      let settleGas = 0n;
      const started = performance.now();
      const sent = [];
      for (let r = 0; r < 10; r++) sent.push(await send(batch(size, 10).data));
      for (const tx of sent) {
        const r = await tx.wait();
        if (r?.status !== 1) throw new Error('settle reverted');
        settleGas += r.gasUsed;
      }
      const seconds = (performance.now() - started) / 1000;
      accounts.splice(0, 10, ...local);
      const contract = new ethers.Contract(address, settlement, provider);
      const signed: { withdrawal: ChainWithdrawal; signature: string }[] = [];
      for (const w of wallets) {
        for (const tok of [NATIVE_TOKEN, usdc.address]) {
          const withdrawal = { key: nextWithdrawalKey++, account: w.address, token: tok, amount: (await contract.balanceOf(tok, w.address)) as bigint, to: w.address };
          signed.push({ withdrawal, signature: await signWithdrawal(w, address, CHAIN_ID, withdrawal) });
        }
      }
      // One operator transaction for all of them, as TradingWithdrawalSender sends the withdrawals waiting at a step.
      const paid = await (await send(withdrawCalldata(signed))).wait();
      if (paid?.status !== 1) throw new Error('withdraw reverted');
      const withdrawGas = paid.gasUsed;
      const trades = BigInt(10 * size);
      return {
        batchSize: size,
        batches: 10,
        wallets: 10,
        trades: Number(trades),
        gas: { deposits: Number(depositGas), settles: Number(settleGas), withdrawals: Number(withdrawGas) },
        depositGas: { approvals: Number(depositParts.approvals), tokenDeposits: Number(depositParts.tokenDeposits), nativeDeposits: Number(depositParts.nativeDeposits) },
        perTrade: { deposits: Number(depositGas / trades), settles: Number(settleGas / trades), withdrawals: Number(withdrawGas / trades) },
        allInGasPerTrade: Number((depositGas + settleGas + withdrawGas) / trades),
        // The same session for wallets that approved the contract in an earlier one (an ERC-20 approval is once per wallet and token).
        allInGasPerTradeApprovedBefore: Number((depositGas - depositParts.approvals + settleGas + withdrawGas) / trades),
        settleGasPerTrade: Number(settleGas / trades),
        settledTradesPerSecond: Math.round(Number(trades) / seconds),
      };
    };
    const session = [await allIn(100), await allIn(1000)];

    const bySize = [];
    for (const size of [1, 10, 100, 1000]) bySize.push(await measure(size, Math.min(10, 2 * size)));
    const byWallets = [];
    for (const wallets of [2, 10, 50, 100]) byWallets.push(await measure(1000, wallets));
    return {
      benchmark: 'settlement',
      note: 'settle() on a local Hardhat chain (automine), ETH/USDC trades netted per wallet and asset; gas includes the 21,000 base cost',
      runs,
      anchors: { idexV1PerTrade: 140_000, uniswapV2Swap: 100_000, erc20Transfer: 48_000 },
      allIn: { goals: { gasPerTradeAtBatch100: 3_000, gasPerTradeAtBatch1000: 1_200, settledTradesPerSecondAtBatch100: 1_500 }, sessions: session },
      bySize,
      byWallets,
    };
  } finally {
    provider.destroy();
    await chain.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
