import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ethers } from 'ethers';
import { devChainAccount } from '../src/platform/chain/dev-accounts';
import { loadTestTokenArtifact } from '../src/platform/chain/test-tokens';
import { netTrades, NettableTrade } from '../src/modules/settlement/netting';
import { ChainDelta, ChainWithdrawal, deploySettlementContract, NATIVE_TOKEN, readTokenSlots, settleCalldata, settlementInterface, signWithdrawal, withdrawCalldata } from '../src/modules/settlement/settlement-contract';
import { permitTerms, signPermit } from '../src/modules/settlement/token-permits';
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
 *   fresh wallets, divided by the session's trades: each wallet's deposit to trading as Keel sends
 *   it (USDC with the ETH as coinAmount: one depositWithCoin carrying the USDC's EIP-2612 permit
 *   and the ETH), the 10 settle() calls, and at the end each wallet's withdrawal of both balances
 *   (signed by the wallet, paid out in one operator transaction, as TradingWithdrawalSender sends
 *   the withdrawals waiting at a step). Sessions: batch 100 and 1,000 (`permit`); at batch 100 also
 *   `sponsored` (each deposit after a gas sponsor's top-up of the wallet), `approval` (a token
 *   without permit: an approval transaction first) and `approvedBefore` (the allowance stands:
 *   depositWithCoin alone). With the transactions and gas by kind, per trade, and settled trades
 *   per second at that size.
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
    const sponsor = new ethers.Wallet(devChainAccount(6).privateKey, provider);
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

    /**
     * A session of 10 batches of `size` trades among 10 wallets that deposit first and withdraw
     * everything at the end. Each wallet's deposit to trading as Keel sends it (TradingService,
     * USDC with coinAmount): `permit` (USDC has EIP-2612; a fresh wallet): one depositWithCoin
     * carrying the permit and the ETH; `sponsored`: the same, after the gas sponsor's top-up of the
     * wallet (a coin transfer); `approval` (a token without permit, or a deposit queued behind
     * another of the same token): an approval, then depositWithCoin with the ETH; `approvedBefore`
     * (the allowance stands from an earlier session): depositWithCoin alone.
     */
    const allIn = async (size: number, mode: 'permit' | 'sponsored' | 'approval' | 'approvedBefore') => {
      const wallets = Array.from({ length: 10 }, () => ethers.Wallet.createRandom().connect(provider));
      const funded = [];
      for (const w of wallets) {
        funded.push(await funder.sendTransaction({ to: w.address, value: ethers.parseEther('100') }));
        funded.push(await token.transfer(w.address, ethers.parseUnits('1000000', 6)));
      }
      await Promise.all(funded.map((tx) => tx.wait()));
      const depositParts = { gasTopUps: 0n, approvals: 0n, deposits: 0n };
      let depositTransactions = 0;
      const tally = async (part: keyof typeof depositParts, tx: ethers.TransactionResponse) => {
        const r = await tx.wait();
        if (r?.status !== 1) throw new Error(`${part} reverted`);
        depositParts[part] += r.gasUsed;
        depositTransactions += 1;
      };
      const amount = ethers.parseUnits('1000000', 6);
      for (const w of wallets) {
        const t = new ethers.Contract(usdc.address, loadTestTokenArtifact().abi, w);
        if (mode === 'sponsored') await tally('gasTopUps', await sponsor.sendTransaction({ to: w.address, value: ethers.parseEther('0.01') }));
        if (mode === 'approval' || mode === 'approvedBefore') {
          const approved = t.approve(address, ethers.MaxUint256);
          if (mode === 'approval') await tally('approvals', await approved);
          else await (await approved).wait(); // in an earlier session: not counted
        }
        let signed = { deadline: 0n, v: 0, r: ethers.ZeroHash, s: ethers.ZeroHash };
        if (mode === 'permit' || mode === 'sponsored') {
          const terms = await permitTerms(provider, usdc.address, CHAIN_ID, w.address);
          if (!terms) throw new Error('USDC has no permit');
          signed = await signPermit(w, terms, address, amount);
        }
        const data = settlement.encodeFunctionData('depositWithCoin', [usdc.address, amount, signed.deadline, signed.v, signed.r, signed.s]);
        await tally('deposits', await w.sendTransaction({ to: address, value: ethers.parseEther('90'), data }));
      }
      const depositGas = depositParts.gasTopUps + depositParts.approvals + depositParts.deposits;
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
      const signedOut: { withdrawal: ChainWithdrawal; signature: string }[] = [];
      for (const w of wallets) {
        for (const tok of [NATIVE_TOKEN, usdc.address]) {
          const withdrawal = { key: nextWithdrawalKey++, account: w.address, token: tok, amount: (await contract.balanceOf(tok, w.address)) as bigint, to: w.address };
          signedOut.push({ withdrawal, signature: await signWithdrawal(w, address, CHAIN_ID, withdrawal) });
        }
      }
      // One operator transaction for all of them, as TradingWithdrawalSender sends the withdrawals waiting at a step.
      const paid = await (await send(withdrawCalldata(signedOut))).wait();
      if (paid?.status !== 1) throw new Error('withdraw reverted');
      const withdrawGas = paid.gasUsed;
      const trades = BigInt(10 * size);
      return {
        mode,
        batchSize: size,
        batches: 10,
        wallets: 10,
        trades: Number(trades),
        transactions: { deposits: depositTransactions, settles: 10, withdrawals: 1 },
        gas: { deposits: Number(depositGas), settles: Number(settleGas), withdrawals: Number(withdrawGas) },
        depositGas: { gasTopUps: Number(depositParts.gasTopUps), approvals: Number(depositParts.approvals), deposits: Number(depositParts.deposits) },
        perTrade: { deposits: Number(depositGas / trades), settles: Number(settleGas / trades), withdrawals: Number(withdrawGas / trades) },
        allInGasPerTrade: Number((depositGas + settleGas + withdrawGas) / trades),
        settleGasPerTrade: Number(settleGas / trades),
        settledTradesPerSecond: Math.round(Number(trades) / seconds),
      };
    };
    const session = [await allIn(100, 'permit'), await allIn(1000, 'permit'), await allIn(100, 'sponsored'), await allIn(100, 'approval'), await allIn(100, 'approvedBefore')];

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
