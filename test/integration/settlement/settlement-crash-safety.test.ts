import { ethers } from 'ethers';
import type { Knex } from 'knex';
import type { TestKeel, TestOrg } from '../../support/keel';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { eventually } from '../../support/eventually';
import { createEthUsdcMarket, depositToTrading, ethUsdcTrade, fundedWallet, tradingWallet } from '../../support/settlement-trading';
import { FailpointCrash, Failpoints } from '../../../src/platform/failpoints';
import { SettlementWorker } from '../../../src/modules/settlement/settlement-worker';
import { SettlementBatcher } from '../../../src/modules/settlement/batcher';
import { TradingWithdrawalSender } from '../../../src/modules/settlement/trading-withdrawal-sender';
import { settlementInterface } from '../../../src/modules/settlement/settlement-contract';
import { UNFENCED } from '../../../src/modules/settlement/chain-lease';
import { rpc } from '../../../src/platform/chain/json-rpc';
import { mine, mineTo, revert, setNextBaseFee, snapshot, withoutAutomine } from '../../support/chain-controls';
import type { SendingWallets } from '../../../src/modules/wallets/sending-wallets';
import { EvmChain } from '../../../src/platform/chain-port/evm-chain';
import { SkewedNode } from '../../support/skewed-node';

/**
 * The settlement worker survives a crash between recording an operator transaction (a batch's
 * settle, a withdrawal's payout) and broadcasting it, a worker that outlives its lease mid-step,
 * a payout the contract refuses, and reorgs of its batches; the trading balances then still equal
 * the contract. The Keel here runs no settlement worker of its own: each test drives the workers
 * it builds, step by step.
 */
const CHAIN_ID = 31_372;

let k: OwnChainKeel;
let t: TestKeel;
let org1: TestOrg;
let org2: TestOrg;
let db: Knex;
let blockchainId: string;
let assets: Record<string, { id: string; address: string }>;
let wallets: { id: string; walletAddress: string; org: TestOrg }[];
let provider: ethers.JsonRpcProvider;

async function wallet(org: TestOrg, name: string): Promise<{ id: string; walletAddress: string; org: TestOrg }> {
  const w = await tradingWallet(blockchainId, assets, org, name, { eth: '20', usdc: '100000', tradeEth: '10', tradeUsdc: '100000' });
  return { ...w, org };
}

const trade = (...args: Parameters<typeof ethUsdcTrade> extends [Knex, ...infer R] ? R : never) => ethUsdcTrade(db, ...args);
const statusOf = async (tradeId: string) => (await db('trades').where({ id: tradeId }).first()).settlementStatus as string;
const batchById = (id: string) => db('settlement_batches').where({ id }).first();
const withdrawalById = (id: string) => db('trading_transfers').where({ id }).first();
const batchOf = async (tradeId: string) => db('settlement_batches').where({ id: (await db('trades').where({ id: tradeId }).first()).settlementBatchId }).first();
const transitionsOf = async (batchId: string) => (await db('settlement_batch_transitions').where({ batchId }).orderBy('id')).map((r: { fromStatus: string | null; toStatus: string }) => `${r.fromStatus ?? '-'}>${r.toStatus}`);

function worker(opts: { failpoints?: string; wallets?: SendingWallets; leaseMs?: number } = {}): SettlementWorker {
  const { services: s, platform } = t.keel;
  const failpoints = Failpoints.fromConfig({ KEEL_ENV: 'sandbox', KEEL_FAILPOINTS: opts.failpoints ?? '' }, platform.logger);
  const withdrawals = new TradingWithdrawalSender(db, opts.wallets ?? s.sendingWallets, s.ledger, s.custodyLedgerSync, platform.outbox, failpoints, platform.logger, { bumpAfterMs: 60_000, bumpPercent: 25, reorgWindowBlocks: 64 });
  const batcher = new SettlementBatcher(db, platform.outbox, withdrawals, { batchSize: 50, maxAgeMs: 0, bumpAfterMs: 60_000, bumpPercent: 25, reorgWindowBlocks: 64 }, platform.logger, failpoints);
  return new SettlementWorker(db, s.networks, s.settlementDeployments, batcher, s.settlementReconciler, s.tradingDepositReorgs, s.tradingExits, platform.metrics, { pollIntervalMs: 100, leaseMs: opts.leaseMs ?? 15_000, reconcileIntervalMs: 60_000 }, platform.logger);
}

/** Steps the worker until the trade is final; its status then. */
async function settle(w: SettlementWorker, tradeId: string): Promise<string> {
  await eventually(async () => {
    await w.tick();
    return ['CONFIRMED', 'FAILED'].includes(await statusOf(tradeId));
  }, 60_000, 20);
  return statusOf(tradeId);
}

/** Steps the worker until the withdrawal from trading is final; its row then. */
async function paidOut(w: SettlementWorker, id: string): Promise<Record<string, any>> {
  await eventually(async () => {
    await w.tick();
    return ['CONFIRMED', 'FAILED'].includes((await withdrawalById(id)).status);
  }, 60_000, 20);
  return withdrawalById(id);
}

/** A withdrawal from A's trading balance to a fresh external address, through the API. */
async function withdrawal(amount = '0.5', recipient = ethers.Wallet.createRandom().address): Promise<{ id: string; recipient: string }> {
  const res = await A().org.pro.request('POST', `/v1/orderbook/wallets/${A().id}/trading/withdrawals`, { body: { assetId: assets.ETH.id, amount, recipient } });
  expect(res.status).toBe(201);
  return { id: res.body.data.id, recipient };
}

const reconcile = () => t.keel.services.settlementReconciler.reconcile(t.keel.services.networks.get(blockchainId)!);

/** A node on another fork from `forkedAt` (SkewedNode) where the transactions `missing` are not; `onReceipt` runs as a receipt is looked up. */
class ForkNode extends SkewedNode {
  missing = new Set<string>();
  onReceipt?: (txHash: string) => Promise<void>;

  override async send(method: string, params: unknown[]): Promise<any> {
    if (method === 'eth_getTransactionReceipt') {
      const txHash = String(params[0]).toLowerCase();
      await this.onReceipt?.(txHash);
      if (this.missing.has(txHash)) return null;
    }
    return super.send(method, params);
  }
}

beforeAll(async () => {
  k = await startKeelOnOwnChain(CHAIN_ID, 1, {
    SETTLEMENT_ENABLED: false,
    TRANSFER_POLL_INTERVAL_MS: 100,
    CHAIN_POLL_INTERVAL_MS: 100,
    RATE_LIMIT_SCALE: 1000,
  });
  ({ t, blockchainId, assets } = k);
  org1 = k.org;
  org2 = await t.createOrg();
  db = t.keel.platform.db;
  provider = new ethers.JsonRpcProvider(k.chain.rpcUrl, CHAIN_ID, { staticNetwork: true, cacheTimeout: -1 });
  await t.keel.services.settlementDeployments.ensureOnDevChain(t.keel.services.networks.get(blockchainId)!);
  await createEthUsdcMarket(t, assets);
  wallets = [await wallet(org1, 'A'), await wallet(org2, 'C')];
}, 180_000);
// Ledger = contract after every test: the trading balances of both wallets equal their balances in the contract.
afterEach(async () => {
  const w = worker();
  try {
    await eventually(async () => {
      await w.tick();
      return (await reconcile()).differences.length === 0;
    }, 30_000, 100);
  } finally {
    await w.stop();
  }
}, 60_000);
afterAll(async () => {
  provider?.destroy();
  await k?.stop();
});

const A = () => wallets[0];
const C = () => wallets[1];

test('a crash after a batch is recorded SUBMITTED, before its broadcast: the next step sends the stored transaction, and the trade settles once', async () => {
  const id = await trade(A(), C(), 'SELL', '2000', '0.01');
  const w = worker({ failpoints: 'throw-after-commit:settlement.batch-signed' });
  try {
    await expect(w.tick()).rejects.toThrow(FailpointCrash);
    const recorded = await batchOf(id);
    expect(recorded).toMatchObject({ status: 'SUBMITTED', rawTx: expect.stringMatching(/^0x/) });
    // Recorded with its nonce, never sent: without the stored bytes this nonce would be a gap.
    expect(await provider.getTransaction(recorded.txHash)).toBeNull();
    expect(await provider.getTransactionCount(recorded.fromAddress, 'pending')).toBe(Number(recorded.nonce));
    expect(await settle(w, id)).toBe('CONFIRMED');
    expect(await batchOf(id)).toMatchObject({ id: recorded.id, txHash: recorded.txHash, nonce: recorded.nonce });
    expect(await transitionsOf(recorded.id)).toEqual(['->BATCHED', 'BATCHED>SUBMITTED', 'SUBMITTED>CONFIRMED']);
  } finally {
    await w.stop();
  }
}, 120_000);

test('a crash after a withdrawal from trading is recorded, before its broadcast: the next step sends it, and it is paid once', async () => {
  const { id, recipient } = await withdrawal('0.5');
  const w = worker({ failpoints: 'throw-after-commit:settlement.withdrawal-signed' });
  try {
    await expect(w.tick()).rejects.toThrow(FailpointCrash);
    const recorded = await withdrawalById(id);
    expect(recorded).toMatchObject({ status: 'SUBMITTED', rawTx: expect.stringMatching(/^0x/) });
    expect(await provider.getTransaction(recorded.txHash)).toBeNull();
    expect(await paidOut(w, id)).toMatchObject({ status: 'CONFIRMED', txHash: recorded.txHash });
    expect(await provider.getBalance(recipient)).toBe(ethers.parseEther('0.5'));
  } finally {
    await w.stop();
  }
}, 120_000);

test('a payout mined between two reads of the node (its receipt not there yet, its nonce already used) is followed as mined: never signed again nor given back', async () => {
  const { id, recipient } = await withdrawal('0.25');
  const w = worker();
  const node = t.keel.services.networks.get(blockchainId)!.provider;
  const receiptOf = node.getTransactionReceipt.bind(node);
  try {
    await w.tick(); // signed, recorded and broadcast: the chain mines it at once
    const sent = await withdrawalById(id);
    expect(sent.status).toBe('SUBMITTED');
    // The first look for its receipt comes a moment before it is mined.
    let lookedEarly = false;
    node.getTransactionReceipt = async (hash: string) => {
      if (hash === sent.txHash && !lookedEarly) return ((lookedEarly = true), null);
      return receiptOf(hash);
    };
    expect(await paidOut(w, id)).toMatchObject({ status: 'CONFIRMED', txHash: sent.txHash });
    expect(lookedEarly).toBe(true);
    expect(await provider.getBalance(recipient)).toBe(ethers.parseEther('0.25'));
    expect(await db('ledger_entries').where({ reference: `trading-withdrawal-refund:${id}` })).toEqual([]);
  } finally {
    node.getTransactionReceipt = receiptOf;
    await w.stop();
  }
}, 120_000);

/** Sending wallets whose first signer waits at a gate: a worker paused mid-step, just before the account signs a withdrawal. */
function pausedAtSigning(real: SendingWallets): { wallets: SendingWallets; reached: Promise<void>; open(): void } {
  let open!: () => void;
  let reach!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const reached = new Promise<void>((r) => (reach = r));
  const wallets: SendingWallets = Object.assign(Object.create(real), {
    signer: async (...args: Parameters<SendingWallets['signer']>) => {
      reach();
      await gate;
      return real.signer(...args);
    },
  });
  return { wallets, reached, open };
}

test('a worker paused mid-step past its lease cannot commit once another took over: the withdrawal is paid once', async () => {
  const { id, recipient } = await withdrawal('0.25');
  const paused = pausedAtSigning(t.keel.services.sendingWallets);
  const first = worker({ wallets: paused.wallets, leaseMs: 1_000 });
  const second = worker();
  try {
    const stepping = first.tick().then(
      () => 'ended',
      (e: Error) => e,
    );
    await paused.reached; // about to sign the payout
    // The first worker's lease lapses while it waits; the second takes over and pays it out.
    const done = await paidOut(second, id);
    expect(done.status).toBe('CONFIRMED');
    paused.open();
    await stepping; // its lease lost, the step ends without committing (logged), or finds the withdrawal gone
    expect(await withdrawalById(id)).toMatchObject({ status: 'CONFIRMED', txHash: done.txHash });
    expect(await provider.getBalance(recipient)).toBe(ethers.parseEther('0.25'));
    expect(await db('outbox_events').where({ type: 'trading_transfer.confirmed' }).whereRaw(`envelope->'data'->>'id' = ?`, [id])).toHaveLength(1);
  } finally {
    paused.open();
    await first.stop();
    await second.stop();
  }
}, 120_000);

test('a payout the contract refuses (the recipient refuses the coin) is FAILED and given back to the trading balance; batches go on', async () => {
  const refusing = ethers.Wallet.createRandom().address;
  await rpc(k.chain.rpcUrl, 'hardhat_setCode', [refusing, '0x60006000fd']); // code that always reverts
  const before = (await t.keel.services.ledger.balance(db, A().id, assets.ETH.id)).available;
  const { id } = await withdrawal('0.1', refusing);
  expect((await t.keel.services.ledger.balance(db, A().id, assets.ETH.id)).available).toBe(before - ethers.parseEther('0.1'));
  const tradeId = await trade(A(), C(), 'SELL', '2004', '0.01');
  const w = worker();
  try {
    expect(await paidOut(w, id)).toMatchObject({ status: 'FAILED', failureReason: 'NativeTransferFailed()' });
    expect(await settle(w, tradeId)).toBe('CONFIRMED');
    // Given back (the trade then sold 0.01 of it).
    expect((await t.keel.services.ledger.balance(db, A().id, assets.ETH.id)).available).toBe(before - ethers.parseEther('0.01'));
    expect(await db('outbox_events').where({ organizationId: org1.orgId, type: 'trading_transfer.failed' }).whereRaw(`envelope->'data'->>'id' = ?`, [id])).toHaveLength(1);
  } finally {
    await w.stop();
  }
}, 120_000);

test('a payout transaction of several withdrawals that reverts on chain gives none back: each is sent again on its own, and only the one whose own transaction reverts is FAILED and refunded', async () => {
  // No code at the trap when the payouts are estimated: both go out in one transaction. Then code that refuses the coin appears there before it is mined.
  const trap = ethers.Wallet.createRandom().address;
  const before = (await t.keel.services.ledger.balance(db, A().id, assets.ETH.id)).available;
  const honest = await withdrawal('0.1');
  const hostile = await withdrawal('0.1', trap);
  const w = worker();
  try {
    const shared = await withoutAutomine(k.chain.rpcUrl, async () => {
      await eventually(async () => {
        await w.tick();
        return (await withdrawalById(honest.id)).status === 'SUBMITTED' && (await withdrawalById(hostile.id)).status === 'SUBMITTED';
      }, 30_000, 50);
      const txHash = (await withdrawalById(honest.id)).txHash;
      expect((await withdrawalById(hostile.id)).txHash).toBe(txHash);
      await rpc(k.chain.rpcUrl, 'hardhat_setCode', [trap, '0x60006000fd']); // always reverts
      await mine(k.chain.rpcUrl, 1);
      return txHash as string;
    });
    expect((await provider.getTransactionReceipt(shared))!.status).toBe(0);
    const paid = await paidOut(w, honest.id);
    expect(paid).toMatchObject({ status: 'CONFIRMED' });
    expect(paid.txHash).not.toBe(shared);
    expect(await provider.getBalance(honest.recipient)).toBe(ethers.parseEther('0.1'));
    const failed = await paidOut(w, hostile.id);
    expect(failed).toMatchObject({ status: 'FAILED', sendAlone: true });
    expect(failed.txHash).not.toBe(shared);
    // Given back once, for its own transaction; the honest one's never.
    expect((await t.keel.services.ledger.balance(db, A().id, assets.ETH.id)).available).toBe(before - ethers.parseEther('0.1'));
    expect(await db('outbox_events').where({ organizationId: org1.orgId, type: 'trading_transfer.failed' }).whereRaw(`envelope->'data'->>'id' IN (?, ?)`, [honest.id, hostile.id])).toHaveLength(1);
  } finally {
    await w.stop();
  }
}, 120_000);


const deployment = async () => (await t.keel.services.settlementDeployments.get(t.keel.services.networks.get(blockchainId)!))!;

const tradingEth = async () => (await t.keel.services.ledger.balance(db, A().id, assets.ETH.id)).available;

/**
 * Two withdrawals paid out in one transaction (`send` sends it: no code at the trap then) that
 * reverts on chain (code that refuses the coin appears at the trap before it is mined).
 */
async function sharedRevertedPayout(send: () => Promise<void>) {
  const trap = ethers.Wallet.createRandom().address;
  const honest = await withdrawal('0.1');
  const hostile = await withdrawal('0.1', trap);
  const shared = await withoutAutomine(k.chain.rpcUrl, async () => {
    await send();
    const txHash = (await withdrawalById(honest.id)).txHash;
    expect(await withdrawalById(hostile.id)).toMatchObject({ status: 'SUBMITTED', txHash });
    await rpc(k.chain.rpcUrl, 'hardhat_setCode', [trap, '0x60006000fd']); // always reverts
    await mine(k.chain.rpcUrl, 1);
    return txHash as string;
  });
  expect((await provider.getTransactionReceipt(shared))!.status).toBe(0);
  return { honest, hostile, shared };
}

test('a reverted payout of several withdrawals is acted on only as deep as the confirmation count: at the head it is left SUBMITTED, deep enough each is sent again on its own', async () => {
  const { services: s, platform } = t.keel;
  // The same chain, followed as one that asks three confirmations.
  const d = await deployment();
  const deep = { ...d, network: { ...d.network, spec: { ...d.network.spec, confirmations: 3 } } };
  const sender = new TradingWithdrawalSender(db, s.sendingWallets, s.ledger, s.custodyLedgerSync, platform.outbox, platform.failpoints, platform.logger, { bumpAfterMs: 60_000, bumpPercent: 25, reorgWindowBlocks: 64 });
  const { honest, hostile, shared } = await sharedRevertedPayout(() => sender.step(deep, UNFENCED));
  // One block deep of three: a reorg may still mine the same transaction elsewhere, and succeed there.
  await sender.step(deep, UNFENCED);
  await mine(k.chain.rpcUrl, 1);
  await sender.step(deep, UNFENCED);
  for (const id of [honest.id, hostile.id]) expect(await withdrawalById(id)).toMatchObject({ status: 'SUBMITTED', txHash: shared, sendAlone: false });
  await mine(k.chain.rpcUrl, 1);
  await sender.step(deep, UNFENCED);
  // Three deep: each tried again on its own; the contract refuses the hostile one alone (FAILED, refunded), the honest one goes out.
  expect(await withdrawalById(hostile.id)).toMatchObject({ status: 'FAILED', sendAlone: true });
  const alone = await withdrawalById(honest.id);
  expect(alone).toMatchObject({ status: 'SUBMITTED', sendAlone: true });
  expect(alone.txHash).not.toBe(shared);
  const w = worker();
  try {
    expect(await paidOut(w, honest.id)).toMatchObject({ status: 'CONFIRMED', txHash: alone.txHash });
  } finally {
    await w.stop();
  }
}, 120_000);

test('a reverted payout of several withdrawals is followed whole even when a step reads fewer transactions than it has rows: none is taken for a transaction of one, FAILED and refunded', async () => {
  const { services: s, platform } = t.keel;
  const d = await deployment();
  const sender = (perStep?: number) => new TradingWithdrawalSender(db, s.sendingWallets, s.ledger, s.custodyLedgerSync, platform.outbox, platform.failpoints, platform.logger, { bumpAfterMs: 60_000, bumpPercent: 25, reorgWindowBlocks: 64, perStep });
  const before = await tradingEth();
  const { honest, hostile, shared } = await sharedRevertedPayout(() => sender().step(d, UNFENCED));
  // A step that follows one transaction (of its two rows, the honest one comes first): both are read, each sent again on its own.
  await sender(1).step(d, UNFENCED);
  for (const id of [honest.id, hostile.id]) {
    const w = await withdrawalById(id);
    expect(w).toMatchObject({ sendAlone: true });
    expect(w.status).not.toBe('FAILED');
    expect(w.txHash).not.toBe(shared);
  }
  expect(await db('ledger_entries').whereIn('idempotencyKey', [`credit:trading-withdrawal-refund:${honest.id}`, `credit:trading-withdrawal-refund:${hostile.id}`])).toEqual([]);
  const w = worker();
  try {
    expect(await paidOut(w, honest.id)).toMatchObject({ status: 'CONFIRMED' });
    expect(await paidOut(w, hostile.id)).toMatchObject({ status: 'FAILED' });
  } finally {
    await w.stop();
  }
  expect(await provider.getBalance(honest.recipient)).toBe(ethers.parseEther('0.1'));
  expect(await tradingEth()).toBe(before - ethers.parseEther('0.1')); // only the hostile one given back
}, 120_000);

/**
 * A payout FAILED because its transaction reverted on chain (no code at the trap when it is
 * estimated; code that refuses the coin there before it is mined), refunded, then buried deeper
 * than the confirmation count; `before` is a chain snapshot from before it was sent.
 */
async function revertedPayout() {
  const { services: s, platform } = t.keel;
  const rpcUrl = k.chain.rpcUrl;
  const d = await deployment();
  const sender = new TradingWithdrawalSender(db, s.sendingWallets, s.ledger, s.custodyLedgerSync, platform.outbox, platform.failpoints, platform.logger, { bumpAfterMs: 60_000, bumpPercent: 25, reorgWindowBlocks: 64 });
  const before = await snapshot(rpcUrl);
  const trap = ethers.Wallet.createRandom().address;
  const { id } = await withdrawal('0.1', trap);
  const asked = await tradingEth();
  await withoutAutomine(rpcUrl, async () => {
    await sender.step(d, UNFENCED);
    expect(await withdrawalById(id)).toMatchObject({ status: 'SUBMITTED' });
    await rpc(rpcUrl, 'hardhat_setCode', [trap, '0x60006000fd']); // always reverts
    await mine(rpcUrl, 1);
  });
  await sender.step(d, UNFENCED);
  const failed = await withdrawalById(id);
  expect(failed).toMatchObject({ status: 'FAILED', failureReason: 'the withdrawal transaction reverted on chain' });
  expect((await provider.getTransactionReceipt(failed.txHash))!.status).toBe(0);
  expect(await tradingEth()).toBe(asked + ethers.parseEther('0.1')); // refunded
  await mine(rpcUrl, 3); // deeper than the chain's confirmation count (1)
  return { d, sender, before, trap, id, asked, failed };
}

test('a payout FAILED because its transaction reverted on chain, whose block a reorg deeper than the confirmations takes off, is SUBMITTED again with its refund taken back: mined again and paid, it is paid once', async () => {
  const rpcUrl = k.chain.rpcUrl;
  const { d, sender, before, trap, id, asked, failed } = await revertedPayout();
  // The reorg takes the block (and the trap's code) away: on the new fork the same signed transaction pays the trap.
  await revert(rpcUrl, before);
  await mineTo(rpcUrl, Number(failed.blockNumber)); // the new fork passes the payout's block
  expect(await provider.getCode(trap)).toBe('0x');
  await sender.checkReorgs(d, UNFENCED);
  const again = await withdrawalById(id);
  expect(again).toMatchObject({ status: 'SUBMITTED', txHash: failed.txHash, nonce: failed.nonce, blockNumber: null, failureReason: null });
  // Its refund taken back in the same transaction as the move back, and its organisation told.
  expect(await db('ledger_entries').where({ idempotencyKey: `reversal:trading-withdrawal-refund:${id}` }).first()).toMatchObject({ walletId: A().id, account: 'trading', availableDelta: (-ethers.parseEther('0.1')).toString() });
  expect(await tradingEth()).toBe(asked);
  const told = await db('outbox_events').where({ organizationId: org1.orgId, type: 'trading_transfer.reorged' }).whereRaw(`envelope->'data'->>'id' = ?`, [id]);
  expect(told).toHaveLength(1);
  expect(told[0].envelope.data).toMatchObject({ id, direction: 'WITHDRAWAL', status: 'SUBMITTED' });
  // Sent again and paid by its own transaction this time: CONFIRMED, paid once, not refunded.
  await mine(rpcUrl, 1);
  await sender.step(d, UNFENCED);
  expect(await withdrawalById(id)).toMatchObject({ status: 'CONFIRMED', txHash: failed.txHash });
  expect(await provider.getBalance(trap)).toBe(ethers.parseEther('0.1'));
  expect(await tradingEth()).toBe(asked);
}, 120_000);

test('a reverted payout a deep reorg took back (its refund taken back) that reverts again on the new chain is FAILED and refunded again, once', async () => {
  const rpcUrl = k.chain.rpcUrl;
  const { d, sender, before, trap, id, asked, failed } = await revertedPayout();
  await revert(rpcUrl, before);
  await mineTo(rpcUrl, Number(failed.blockNumber));
  await rpc(rpcUrl, 'hardhat_setCode', [trap, '0x60006000fd']); // the new chain refuses it too
  await sender.checkReorgs(d, UNFENCED); // SUBMITTED, refund taken back, sent again (and mined: reverted again)
  expect(await tradingEth()).toBe(asked);
  await mine(rpcUrl, 1);
  await sender.step(d, UNFENCED);
  const refailed = await withdrawalById(id);
  expect(refailed).toMatchObject({ status: 'FAILED', txHash: failed.txHash });
  expect(refailed.blockHash).not.toBe(failed.blockHash);
  expect(await db('ledger_entries').where({ idempotencyKey: `credit:trading-withdrawal-refund:${id}#2` }).first()).toMatchObject({ account: 'trading', availableDelta: ethers.parseEther('0.1').toString() });
  expect(await tradingEth()).toBe(asked + ethers.parseEther('0.1')); // given back once in all
  expect(await provider.getBalance(trap)).toBe(0n);
  expect(await db('outbox_events').where({ type: 'trading_transfer.failed' }).whereRaw(`envelope->'data'->>'id' = ?`, [id])).toHaveLength(2);
}, 120_000);

test("a reverted payout's refund a deep reorg takes back after it was locked in an order is a debt of the trading account: reconciliation subtracts it there, not from custody, the trading balance and the ledger balance (walletBalances) show it with nothing available, and a deposit to trading repays it", async () => {
  const rpcUrl = k.chain.rpcUrl;
  const { d, sender, before, id, failed } = await revertedPayout();
  // The refund is locked whole (with the rest of the trading ETH) by a resting sale far above the market.
  const locked = await A().org.pro.request('POST', '/v1/orderbook/orders', { body: { walletId: A().id, market: 'ETH-USDC', side: 'SELL', type: 'LIMIT', price: '90000', quantity: ethers.formatEther(await tradingEth()) } });
  expect(locked.status).toBe(201);
  expect(await tradingEth()).toBe(0n);
  await revert(rpcUrl, before);
  await mineTo(rpcUrl, Number(failed.blockNumber));
  await sender.checkReorgs(d, UNFENCED); // SUBMITTED, the refund taken back: nothing available, all of it a debt
  await mine(rpcUrl, 1);
  await sender.step(d, UNFENCED);
  expect(await withdrawalById(id)).toMatchObject({ status: 'CONFIRMED' }); // paid from the contract this time
  // The trading ledger counts the 0.1 the contract paid out; the debt makes up for it there. Custody is untouched.
  expect((await reconcile()).differences).toEqual([]);
  expect(await db('wallet_debts').where({ walletId: A().id, assetId: assets.ETH.id })).toEqual([expect.objectContaining({ account: 'trading', amount: ethers.parseEther('0.1').toString() })]);
  expect((await A().org.pro.request('DELETE', `/v1/orderbook/orders/${locked.body.data.id}`)).status).toBe(200);
  expect(await t.keel.services.ledger.spendable(db, A().id, assets.ETH.id, 'trading')).toBe(0n); // nothing of the asset is spendable in trading while it owes
  // The ledger holds ETH available again (the order is cancelled), but the trading balance shows what may be taken: nothing, and the debt.
  expect(await tradingEth()).toBeGreaterThan(0n);
  const eth = async () => (await A().org.pro.request('GET', `/v1/orderbook/wallets/${A().id}/trading/balances`)).body.data.find((b: { symbol: string }) => b.symbol === 'ETH');
  const ethGraphql = async () =>
    (await A().org.pro.request('POST', '/graphql', { body: { query: 'query($id: ID!) { tradingBalances(walletId: $id) { symbol available debt locked } }', variables: { id: A().id } } })).body.data.tradingBalances.find((b: { symbol: string }) => b.symbol === 'ETH');
  expect(await eth()).toMatchObject({ available: '0', debt: '0.1', locked: '0' });
  expect(await ethGraphql()).toEqual({ symbol: 'ETH', available: '0', debt: '0.1', locked: '0' });
  // The wallet's ledger balance (walletBalances) reads the same rule: nothing available beside the debt.
  const ledgerEth = async () => (await A().org.pro.request('GET', `/v1/orderbook/wallets/${A().id}/balances`)).body.data.find((b: { symbol: string }) => b.symbol === 'ETH');
  const ledgerEthGraphql = async () =>
    (await A().org.pro.request('POST', '/graphql', { body: { query: 'query($id: ID!) { walletBalances(walletId: $id) { symbol available debt locked } }', variables: { id: A().id } } })).body.data.walletBalances.find((b: { symbol: string }) => b.symbol === 'ETH');
  expect(await ledgerEth()).toMatchObject({ available: '0', debt: '0.1', locked: '0' });
  expect(await ledgerEthGraphql()).toEqual({ symbol: 'ETH', available: '0', debt: '0.1', locked: '0' });
  // As it shows: a withdrawal of any of it is refused.
  const refused = await A().org.pro.request('POST', `/v1/orderbook/wallets/${A().id}/trading/withdrawals`, { body: { assetId: assets.ETH.id, amount: '0.01' } });
  expect(refused.status).toBe(400);
  expect(refused.body.error.code).toBe('INSUFFICIENT_FUNDS');
  await depositToTrading(A().org, A().id, assets.ETH.id, '0.1');
  expect(await db('wallet_debts').where({ walletId: A().id, assetId: assets.ETH.id, account: 'trading' }).first()).toMatchObject({ amount: '0' });
  // Repaid: what the ledger holds is available again, and no debt.
  expect(await eth()).toMatchObject({ available: ethers.formatEther(await tradingEth()).replace(/\.0$/, ''), debt: '0' });
  expect(await ledgerEth()).toMatchObject({ available: ethers.formatEther(await tradingEth()).replace(/\.0$/, ''), debt: '0' });
  expect(await ledgerEthGraphql()).toMatchObject({ available: ethers.formatEther(await tradingEth()).replace(/\.0$/, ''), debt: '0' });
  expect(await db('outbox_events').where({ organizationId: org1.orgId, type: 'wallet.debt_repaid' }).whereRaw(`envelope->'data'->>'walletId' = ?`, [A().id]).first()).toMatchObject({
    envelope: expect.objectContaining({ data: expect.objectContaining({ account: 'trading', amount: ethers.parseEther('0.1').toString(), outstanding: '0' }) }),
  });
}, 120_000);

/** Once a block is mined, the reorged batch is settled by its own first transaction: one operator transaction at its nonce on the new chain, no second one that the replay bitmap refused. */
async function settledByItsOwnTransaction(w: SettlementWorker, tradeId: string, confirmed: { id: string; txHash: string; nonce: string; fromAddress: string }): Promise<void> {
  await mine(k.chain.rpcUrl, 1);
  expect(await settle(w, tradeId)).toBe('CONFIRMED');
  expect(await batchById(confirmed.id)).toMatchObject({ status: 'CONFIRMED', txHash: confirmed.txHash, nonce: confirmed.nonce });
  expect(await provider.getTransactionCount(confirmed.fromAddress, 'latest')).toBe(Number(confirmed.nonce) + 1);
}

test('a reorged batch whose transaction is back in the pool settles by that transaction, never by a second one', async () => {
  const rpcUrl = k.chain.rpcUrl;
  const before = await snapshot(rpcUrl);
  const id = await trade(A(), C(), 'SELL', '2005', '0.01');
  const w = worker();
  try {
    expect(await settle(w, id)).toBe('CONFIRMED');
    const confirmed = await batchOf(id);
    await withoutAutomine(rpcUrl, async () => {
      // A reorg as a node sees one: the blocks are gone and the batch's transaction is back in the pool.
      await revert(rpcUrl, before);
      await mine(rpcUrl, 1);
      await provider.broadcastTransaction(confirmed.rawTx);
      await w.tick();
      expect((await batchById(confirmed.id)).status).toBe('SUBMITTED');
    });
    await settledByItsOwnTransaction(w, id, confirmed);
  } finally {
    await w.stop();
  }
}, 120_000);

test('a reorged batch behind a gap (an earlier operator transaction gone with the reorg) is signed again at the next nonce, not left waiting behind it', async () => {
  const rpcUrl = k.chain.rpcUrl;
  const w = worker();
  try {
    const before = await snapshot(rpcUrl);
    // An operator transaction Keel does not follow, ahead of the batch's: the reorg takes both.
    const d = await deployment();
    await (await d.operator.sendTransaction({ to: d.operator.address, value: 0n })).wait();
    const id = await trade(A(), C(), 'SELL', '2008', '0.01');
    expect(await settle(w, id)).toBe('CONFIRMED');
    const confirmed = await batchOf(id);
    await revert(rpcUrl, before);
    expect(await provider.getTransactionCount(confirmed.fromAddress, 'latest')).toBeLessThan(Number(confirmed.nonce));
    await mineTo(rpcUrl, Number(confirmed.blockNumber)); // the new fork passes the batch's block
    expect(await settle(w, id)).toBe('CONFIRMED');
    await eventually(async () => {
      await w.tick();
      return (await batchById(confirmed.id)).status === 'CONFIRMED';
    }, 30_000, 20);
    const settled = await batchById(confirmed.id);
    expect(Number(settled.nonce)).toBeLessThan(Number(confirmed.nonce));
    expect(settled.replacedTxHashes).toContain(confirmed.txHash);
  } finally {
    await w.stop();
  }
}, 120_000);

/**
 * Trades of A selling to C, sent in one batch whose transaction reverts on chain (the contract's code
 * refuses every call in the block it is mined in, then is put back), buried deeper than the
 * confirmation count and followed: FAILED (and split, with more than one trade). `before` is a chain
 * snapshot from before it was sent; `b` the batcher the test steps.
 */
async function revertedBatch(count: number) {
  const { services: s, platform } = t.keel;
  const rpcUrl = k.chain.rpcUrl;
  const d = await deployment();
  const withdrawals = new TradingWithdrawalSender(db, s.sendingWallets, s.ledger, s.custodyLedgerSync, platform.outbox, platform.failpoints, platform.logger, { bumpAfterMs: 60_000, bumpPercent: 25, reorgWindowBlocks: 64 });
  const b = new SettlementBatcher(db, platform.outbox, withdrawals, { batchSize: 50, maxAgeMs: 0, bumpAfterMs: 60_000, bumpPercent: 25, reorgWindowBlocks: 64 }, platform.logger);
  const before = await snapshot(rpcUrl);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await trade(A(), C(), 'SELL', '2010', '0.01'));
  const code = await provider.getCode(d.address);
  await withoutAutomine(rpcUrl, async () => {
    await b.step(d, UNFENCED);
    expect((await batchOf(ids[0])).status).toBe('SUBMITTED');
    await rpc(rpcUrl, 'hardhat_setCode', [d.address, '0x60006000fd']); // always reverts
    await mine(rpcUrl, 1);
    await rpc(rpcUrl, 'hardhat_setCode', [d.address, code]);
  });
  await mine(rpcUrl, 3); // deeper than the chain's confirmation count (1)
  await b.step(d, UNFENCED);
  const failed = await db('settlement_batches').whereRaw('? = ANY(trade_ids)', [ids[0]]).whereNull('parentBatchId').first();
  expect(failed).toMatchObject({ status: 'FAILED', tradeCount: count });
  expect((await provider.getTransactionReceipt(failed.txHash))!.status).toBe(0);
  return { d, b, before, ids, failed };
}

test('a batch FAILED because its transaction reverted on chain, whose block a reorg deeper than the confirmations takes off, is REORGED and its transaction sent again: settled on the new chain, its trade is CONFIRMED, once', async () => {
  const rpcUrl = k.chain.rpcUrl;
  const { d, b, before, ids: [id], failed } = await revertedBatch(1);
  expect(await statusOf(id)).toBe('FAILED');
  await revert(rpcUrl, before);
  await mineTo(rpcUrl, Number(failed.blockNumber)); // the new fork passes the batch's block
  await b.step(d, UNFENCED); // REORGED; its nonce is free again: the same signed transaction goes out (and is mined)
  expect(await batchById(failed.id)).toMatchObject({ status: 'SUBMITTED', txHash: failed.txHash, nonce: failed.nonce });
  expect(await statusOf(id)).toBe('SUBMITTED');
  await b.step(d, UNFENCED);
  expect(await batchById(failed.id)).toMatchObject({ status: 'CONFIRMED', txHash: failed.txHash });
  expect(await statusOf(id)).toBe('CONFIRMED');
  expect(await transitionsOf(failed.id)).toEqual(['->BATCHED', 'BATCHED>SUBMITTED', 'SUBMITTED>FAILED', 'FAILED>REORGED', 'REORGED>SUBMITTED', 'SUBMITTED>CONFIRMED']);
  expect(await db('outbox_events').where({ type: 'settlement_batch.reorged' }).whereRaw(`envelope->'data'->>'batchId' = ?`, [failed.id])).toHaveLength(2); // one per organisation
  const contract = new ethers.Contract(d.address, settlementInterface(), provider);
  expect(await contract.isSettled((await db('trades').where({ id }).first()).settlementKey)).toBe(true);
  // Settled once: the ledger equals the contract (checked after every test).
}, 120_000);

test("a split batch's reverted transaction that a deep reorg puts back in the pool, mined again and settling this time, takes its trades back from its parts: CONFIRMED, the parts' transactions only revert (FAILED), no trade FAILED", async () => {
  const rpcUrl = k.chain.rpcUrl;
  const { d, b, before, ids, failed } = await revertedBatch(2);
  // Its parts settle the two trades.
  await eventually(async () => {
    await b.step(d, UNFENCED);
    return (await Promise.all(ids.map(statusOf))).every((x) => x === 'CONFIRMED');
  }, 60_000, 20);
  const parts: Record<string, any>[] = await db('settlement_batches').where({ parentBatchId: failed.id }).orderBy('createdAt');
  expect(parts.map((p) => p.status)).toEqual(['CONFIRMED', 'CONFIRMED']);

  await revert(rpcUrl, before);
  await mineTo(rpcUrl, Math.max(...parts.map((p) => Number(p.blockNumber)))); // the new fork passes the parts' blocks
  // A reorg as a node sees one: the batch's transaction is back in the pool, and mined again on this chain it settles both trades.
  await provider.broadcastTransaction(failed.rawTx);
  expect((await provider.getTransactionReceipt(failed.txHash))!.status).toBe(1);
  await eventually(async () => {
    await b.step(d, UNFENCED);
    return (await db('settlement_batches').whereIn('id', parts.map((p) => p.id))).every((p: { status: string }) => p.status === 'FAILED');
  }, 60_000, 20);
  expect(await batchById(failed.id)).toMatchObject({ status: 'CONFIRMED', txHash: failed.txHash });
  expect(await transitionsOf(failed.id)).toEqual(['->BATCHED', 'BATCHED>SUBMITTED', 'SUBMITTED>FAILED', 'FAILED>REORGED', 'REORGED>SUBMITTED', 'SUBMITTED>CONFIRMED']);
  for (const id of ids) expect(await db('trades').where({ id }).first()).toMatchObject({ settlementBatchId: failed.id, settlementStatus: 'CONFIRMED' });
  for (const p of parts) expect((await batchById(p.id)).failureReason).toMatch(/^TradeAlreadySettled\(/);
}, 180_000);

/** A confirmed deposit to trading whose block one check has remembered: its row, and how many times its organisation was told it was taken back. */
async function depositWithBlockRemembered() {
  const s = t.keel.services;
  const network = s.networks.get(blockchainId)!;
  const deposit = await depositToTrading(A().org, A().id, assets.ETH.id, '0.1');
  expect(await s.tradingDepositReorgs.check(network)).toBe(0);
  const row = await db('trading_transfers').where({ id: deposit.id }).first();
  const told = async () => (await db('outbox_events').where({ type: 'trading_transfer.reorged' }).whereRaw(`envelope->'data'->>'id' = ?`, [deposit.id])).length;
  return { s, network, deposit, row, told };
}

test("a deposit to trading one worker node marks taken back while another, reading the chain before, finds it still mined keeps its mark: the late look clears nothing, and its organisation is told once", async () => {
  const { s, network, deposit, row, told } = await depositWithBlockRemembered();
  expect(row).toMatchObject({ reorgedAt: null, blockHash: expect.stringMatching(/^0x/) });
  const on = (node: ForkNode) => ({ ...network, provider: node, port: new EvmChain({ provider: node, chainId: CHAIN_ID, confirmations: network.port.confirmations }) });
  // B's node: another block at the deposit's height, its transaction nowhere (a second reorg).
  const b = Object.assign(new ForkNode(k.chain.rpcUrl, CHAIN_ID), { forkedAt: Number(row.blockNumber) });
  b.missing.add(row.txHash.toLowerCase());
  // A's node: the deposit's block not the one it serves, its receipt still the recorded block's; B marks the deposit while A looks it up.
  const a = Object.assign(new ForkNode(k.chain.rpcUrl, CHAIN_ID), { forkedAt: Number(row.blockNumber) });
  a.onReceipt = async (txHash) => {
    if (txHash !== row.txHash.toLowerCase()) return;
    a.onReceipt = undefined;
    expect(await s.tradingDepositReorgs.check(on(b))).toBe(1);
  };
  try {
    expect(await s.tradingDepositReorgs.check(on(a))).toBe(0);
    expect(a.onReceipt).toBeUndefined();
    // A's late write cleared nothing: B's mark stands, and B's next look finds it marked already.
    expect((await db('trading_transfers').where({ id: deposit.id }).first()).reorgedAt).not.toBeNull();
    expect(await s.tradingDepositReorgs.check(on(b))).toBe(0);
    expect(await told()).toBe(1);
  } finally {
    a.destroy();
    b.destroy();
  }
  // Looked at again on the chain as it is: mined where recorded, the mark cleared; told once.
  expect(await s.tradingDepositReorgs.check(network)).toBe(0);
  expect(await db('trading_transfers').where({ id: deposit.id }).first()).toMatchObject({ reorgedAt: null, blockHash: row.blockHash, txHash: row.txHash });
  expect(await told()).toBe(1);
}, 120_000);

test("a deposit to trading one worker node finds gone while another has just found it mined in another block is not marked: the late look tells nothing", async () => {
  const { s, network, deposit, row, told } = await depositWithBlockRemembered();
  // A's node: the deposit's block not the one it serves, its transaction nowhere. While A looks it up, another node
  // finds it mined in another block and records where (as check does for a deposit that moved).
  const a = Object.assign(new ForkNode(k.chain.rpcUrl, CHAIN_ID), { forkedAt: Number(row.blockNumber) });
  a.missing.add(row.txHash.toLowerCase());
  const elsewhere = ethers.hexlify(ethers.randomBytes(32));
  a.onReceipt = async (txHash) => {
    if (txHash !== row.txHash.toLowerCase()) return;
    a.onReceipt = undefined;
    await db('trading_transfers').where({ id: deposit.id }).update({ blockHash: elsewhere, reorgedAt: null });
  };
  try {
    expect(await s.tradingDepositReorgs.check({ ...network, provider: a, port: new EvmChain({ provider: a, chainId: CHAIN_ID, confirmations: network.port.confirmations }) })).toBe(0);
    expect(a.onReceipt).toBeUndefined();
    expect(await db('trading_transfers').where({ id: deposit.id }).first()).toMatchObject({ reorgedAt: null, blockHash: elsewhere });
    expect(await told()).toBe(0);
  } finally {
    a.destroy();
  }
  // Looked at again on the chain as it is: mined where it was first recorded, followed there; nothing told.
  expect(await s.tradingDepositReorgs.check(network)).toBe(0);
  expect(await db('trading_transfers').where({ id: deposit.id }).first()).toMatchObject({ reorgedAt: null, blockHash: row.blockHash });
  expect(await told()).toBe(0);
}, 120_000);

test("a fee-bumped deposit to trading mined by an earlier signing, which a deep reorg takes off, is sent again as the line's newest signing and followed by that one's hash: mined again, the mark is cleared", async () => {
  const s = t.keel.services;
  const network = s.networks.get(blockchainId)!;
  const rpcUrl = k.chain.rpcUrl;
  const before = await snapshot(rpcUrl);
  const deposit = await depositToTrading(A().org, A().id, assets.ETH.id, '0.1');
  const confirmed = await db('trading_transfers').where({ id: deposit.id }).first();
  // The line as the sender leaves it when a fee bump's earlier signing is the one mined: the newest signing's bytes, the mined one's hash.
  const first = ethers.Transaction.from((await db('transfer_items').where({ id: confirmed.depositItemId }).first()).rawTx);
  expect(first.hash).toBe(confirmed.txHash);
  const signer = await s.sendingWallets.signer(A().org.orgId, A().id, null);
  // Its fee cap raised, its tip kept: mined at the first block's base fee it pays the same gas, so the custody ledger stays right.
  const bumped = await signer.signTransaction({ type: 2, chainId: CHAIN_ID, nonce: first.nonce, to: first.to, data: first.data, value: first.value, gasLimit: first.gasLimit, maxFeePerGas: first.maxFeePerGas! * 2n, maxPriorityFeePerGas: first.maxPriorityFeePerGas });
  await db('transfer_items').where({ id: confirmed.depositItemId }).update({ rawTx: bumped, replacedTxHashes: [ethers.keccak256(bumped)] });
  const { baseFeePerGas } = (await provider.getBlock(Number(confirmed.blockNumber)))!;
  await mine(rpcUrl, 3); // deeper than the chain's confirmation count (1)

  await withoutAutomine(rpcUrl, async () => {
    await revert(rpcUrl, before);
    await mineTo(rpcUrl, Number(confirmed.blockNumber));
    expect(await s.tradingDepositReorgs.check(network)).toBe(1);
    // The newest signing went out again (the earliest's bytes are not kept).
    expect(await provider.getTransaction(ethers.keccak256(bumped))).not.toBeNull();
    await setNextBaseFee(rpcUrl, baseFeePerGas!);
    await mine(rpcUrl, 1);
  });
  const receipt = (await provider.getTransactionReceipt(ethers.keccak256(bumped)))!;
  expect(receipt.status).toBe(1);
  expect(await s.tradingDepositReorgs.check(network)).toBe(0);
  expect(await db('trading_transfers').where({ id: deposit.id }).first()).toMatchObject({ reorgedAt: null, txHash: receipt.hash, blockNumber: String(receipt.blockNumber), blockHash: receipt.blockHash });
  expect(await db('outbox_events').where({ type: 'trading_transfer.reorged' }).whereRaw(`envelope->'data'->>'id' = ?`, [deposit.id])).toHaveLength(1);
}, 120_000);

test('keel settlement migrate: a trading balance the per-batch funding flow left at the wallet\'s address is deposited once (its gas sponsored), and a trade queued under the old flow settles once', async () => {
  // A wallet as the old flow left it: its funds at its address, its ledger rows 'trading' (migration 030's label for them).
  const old = await fundedWallet(blockchainId, org1, 'Old flow', '5', '1000');
  const custody = (assetId: string) => t.keel.services.ledger.balance(db, old.id, assetId, 'custody');
  await eventually(async () => (await custody(assets.ETH.id)).available === ethers.parseEther('5') && (await custody(assets.USDC.id)).available === 1_000_000_000n, 30_000);
  await db('ledger_balances').where({ walletId: old.id, account: 'custody' }).update({ account: 'trading' });
  await db('ledger_entries').where({ walletId: old.id }).update({ account: 'trading' });
  // Traded under the old flow, not settled yet: C buys 0.01 ETH from it.
  const id = await trade({ org: org1, id: old.id }, C(), 'SELL', '2100', '0.01');
  expect((await reconcile()).differences.filter((d) => d.walletId === old.id && d.account === 'trading').map((d) => d.symbol).sort()).toEqual(['ETH', 'USDC']);

  // The contract the current one replaced (here one holding nothing: no code) is not migrated yet.
  const previousAddress = ethers.Wallet.createRandom().address;
  await db('settlement_contracts').where({ blockchainId }).update({ previousAddress, previousReleasedAt: null });

  const network = t.keel.services.networks.get(blockchainId)!;
  const migrate = () => t.keel.services.tradingMigration.migrate(network, { gasSponsorWalletId: A().id });
  const report = await migrate();
  // What the previous contract held is handed back: recorded, so `keel settlement deploy --replace` may replace the current one.
  expect((await db('settlement_contracts').where({ blockchainId }).first()).previousReleasedAt).toBeInstanceOf(Date);
  const mine_ = report.lines.filter((l) => l.walletId === old.id);
  expect(mine_.map((l) => `${l.symbol} ${l.lacking} ${l.refused}`).sort()).toEqual([`ETH ${ethers.parseEther('5')} null`, 'USDC 1000000000 null']);
  await eventually(async () => (await db('trading_transfers').where({ walletId: old.id, migration: true })).every((r: { status: string }) => r.status === 'CONFIRMED'), 90_000, 200);
  // Run again: nothing left to deposit, nothing deposited twice.
  expect((await migrate()).lines.filter((l) => l.walletId === old.id)).toEqual([]);
  expect(await db('trading_transfers').where({ walletId: old.id })).toHaveLength(2);
  // The trade queued under the old flow settles, once, from the contract.
  const w = worker();
  try {
    expect(await settle(w, id)).toBe('CONFIRMED');
  } finally {
    await w.stop();
  }
  // The trading ledger is what it was (not credited again): 5 ETH less the 0.01 sold.
  expect((await t.keel.services.ledger.balance(db, old.id, assets.ETH.id)).available).toBe(ethers.parseEther('4.99'));
}, 180_000);
