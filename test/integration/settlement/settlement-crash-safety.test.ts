import { ethers } from 'ethers';
import type { Knex } from 'knex';
import type { TestKeel, TestOrg } from '../../support/keel';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { eventually } from '../../support/eventually';
import { createEthUsdcMarket, ethUsdcTrade, fundedWallet, orderbookBalances } from '../../support/settlement-trading';
import { FailpointCrash, Failpoints } from '../../../src/platform/failpoints';
import { SettlementWorker } from '../../../src/modules/settlement/settlement-worker';
import { SettlementBatcher } from '../../../src/modules/settlement/batcher';
import { ProceedsRelease } from '../../../src/modules/settlement/proceeds-release';
import { SettlementFunding } from '../../../src/modules/settlement/funding';
import { FundingTransactions } from '../../../src/modules/settlement/funding-transactions';
import type { FundingRetryOptions } from '../../../src/modules/settlement/funding-retry';
import { settlementInterface } from '../../../src/modules/settlement/settlement-contract';
import { walletAccounts } from '../../../src/modules/settlement/wallet-accounts';
import { rpc } from '../../../src/platform/chain/json-rpc';
import { mine, revert, snapshot, withoutAutomine } from '../../support/chain-controls';
import type { SendingWallets } from '../../../src/modules/wallets/sending-wallets';

/**
 * The settlement worker survives what the final review of issue 17 found: a crash between taking a
 * funding nonce and broadcasting, a worker that outlives its lease mid-step, and funding the chain
 * refuses for a reason that may pass. The Keel here runs no settlement worker of its own: each test
 * drives the workers it builds, step by step.
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

async function wallet(org: TestOrg, name: string, eth: string, usdc: string): Promise<{ id: string; walletAddress: string; org: TestOrg }> {
  const w = await fundedWallet(blockchainId, org, name, eth, usdc);
  await eventually(async () => {
    const held = await orderbookBalances(org, w.id);
    return (eth === '0' || held.ETH?.available === eth) && (usdc === '0' || held.USDC?.available === usdc);
  }, 30_000);
  return { ...w, org };
}

const trade = (...args: Parameters<typeof ethUsdcTrade> extends [Knex, ...infer R] ? R : never) => ethUsdcTrade(db, ...args);
const statusOf = async (tradeId: string) => (await db('trades').where({ id: tradeId }).first()).settlementStatus as string;
const batchById = (id: string) => db('settlement_batches').where({ id }).first();

function funding(opts: { failpoints?: string; wallets?: SendingWallets; bumpAfterMs?: number } = {}): SettlementFunding {
  const { services, platform } = t.keel;
  const failpoints = Failpoints.fromConfig({ KEEL_ENV: 'sandbox', KEEL_FAILPOINTS: opts.failpoints ?? '' }, platform.logger);
  const feeBump = { afterMs: opts.bumpAfterMs ?? 60_000, percent: 25 };
  return new SettlementFunding(opts.wallets ?? services.sendingWallets, new FundingTransactions(db, services.custodyLedgerSync, failpoints, platform.logger, feeBump), platform.logger);
}

/** The Keel's sending wallets, recording the master wallet of each key derived to sign. */
function derivingKeysOf(derived: string[]): SendingWallets {
  const wallets = t.keel.services.sendingWallets;
  return Object.create(wallets, {
    signer: { value: (...args: Parameters<SendingWallets['signer']>) => (derived.push(args[1]), wallets.signer(...args)) },
  }) as SendingWallets;
}

function worker(f: SettlementFunding = funding(), leaseMs = 15_000, retry: Partial<FundingRetryOptions> = {}): SettlementWorker {
  const { services: s, platform } = t.keel;
  const batcher = new SettlementBatcher(db, platform.outbox, f, new ProceedsRelease(db, t.keel.platform.logger), { batchSize: 50, maxAgeMs: 0, bumpAfterMs: 60_000, bumpPercent: 25, reorgWindowBlocks: 64, fundingRetryBaseMs: 60_000, fundingMaxAttempts: 5, ...retry }, platform.logger);
  return new SettlementWorker(db, s.networks, s.settlementDeployments, batcher, s.settlementReconciler, platform.metrics, { pollIntervalMs: 100, leaseMs, reconcileIntervalMs: 60_000 }, platform.logger);
}

/** Steps the worker until the trade is final; its status then. */
async function settle(w: SettlementWorker, tradeId: string): Promise<string> {
  await eventually(async () => {
    await w.tick();
    return ['CONFIRMED', 'FAILED'].includes(await statusOf(tradeId));
  }, 60_000, 20);
  return statusOf(tradeId);
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
  wallets = [await wallet(org1, 'A', '20', '100000'), await wallet(org2, 'C', '20', '100000')];
}, 120_000);
afterAll(async () => {
  provider?.destroy();
  await k?.stop();
});

const A = () => wallets[0];
const C = () => wallets[1];

test('a crash after a funding nonce is committed, before the broadcast: the next step sends the stored transaction, its gas is charged once, and the wallet\'s next transfer is not stuck', async () => {
  const id = await trade(A(), C(), 'SELL', '2000', '0.01');
  const w = worker(funding({ failpoints: 'throw-after-commit:settlement.funding-signed' }));
  try {
    await expect(w.tick()).rejects.toThrow(FailpointCrash);
    const signed = await db('settlement_funding_txs').where({ status: 'SIGNED' }).first();
    expect(signed).toMatchObject({ rawTx: expect.stringMatching(/^0x/), nonce: expect.any(String) });
    // Taken and recorded, never sent: without the stored bytes this nonce would be a gap.
    expect(await provider.getTransaction(signed.txHash)).toBeNull();
    expect(await provider.getTransactionCount(signed.fromAddress, 'pending')).toBe(Number(signed.nonce));

    expect(await settle(w, id)).toBe('CONFIRMED');
    expect(await db('settlement_funding_txs').where({ txHash: signed.txHash }).first()).toMatchObject({ status: 'MINED' });
    expect((await provider.getTransactionReceipt(signed.txHash))?.status).toBe(1);
    const charges = await db('ledger_entries').whereLike('idempotencyKey', `debit:settlement-gas:${signed.txHash}:%`);
    expect(charges).toHaveLength(1);

    // The wallet's next transaction (a transfer out, sharing its sender nonces) is mined.
    const owner = wallets.find((x) => x.id === signed.walletId)!;
    const external = ethers.Wallet.createRandom().address;
    const res = await owner.org.core.request('POST', `/v1/master-wallets/${owner.id}/transfer`, { body: { assets: [{ assetId: assets.ETH.id, recipient: external, amount: '0.001' }] } });
    expect(res.status).toBe(201);
    await eventually(async () => (await provider.getBalance(external)) === ethers.parseEther('0.001'), 30_000);
  } finally {
    await w.stop();
  }
}, 120_000);

/** Sending wallets whose first signer waits at a gate: a worker paused mid-step, just before it signs a funding transaction. */
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

const batchOf = async (tradeId: string) => db('settlement_batches').where({ id: (await db('trades').where({ id: tradeId }).first()).settlementBatchId }).first();
const transitionsOf = async (batchId: string) => (await db('settlement_batch_transitions').where({ batchId }).orderBy('id')).map((r: { fromStatus: string | null; toStatus: string }) => `${r.fromStatus ?? '-'}>${r.toStatus}`);

test('a worker paused mid-step past its lease cannot commit once another took over: the trade settles once, funded once', async () => {
  const id = await trade(A(), C(), 'SELL', '2001', '0.01');
  const paused = pausedAtSigning(t.keel.services.sendingWallets);
  const first = worker(funding({ wallets: paused.wallets }), 1_000);
  const second = worker();
  try {
    const stepping = first.tick().then(
      () => 'ended',
      (e: Error) => e,
    );
    await paused.reached; // batched, and about to sign a deposit for it
    const batch = await batchOf(id);
    expect(batch.status).toBe('BATCHED');
    // The first worker's lease lapses while it waits; the second takes over and settles the batch.
    expect(await settle(second, id)).toBe('CONFIRMED');
    const funded = await db('settlement_funding_txs').where({ batchId: batch.id });
    expect(funded.length).toBeGreaterThan(0);

    paused.open();
    expect(await stepping).toBe('ended'); // its lease lost, the step ends without committing
    const after = await db('settlement_funding_txs').where({ batchId: batch.id });
    expect(after.map((x: { txHash: string }) => x.txHash).sort()).toEqual(funded.map((x: { txHash: string }) => x.txHash).sort());
    expect(after.every((x: { status: string }) => x.status === 'MINED')).toBe(true);
    expect(await transitionsOf(batch.id)).toEqual(['->BATCHED', 'BATCHED>SUBMITTED', 'SUBMITTED>CONFIRMED']);
  } finally {
    paused.open();
    await first.stop();
    await second.stop();
  }
}, 120_000);

test('a batch whose funding the chain refuses (no coin for gas) is queued again with a wait, and settles once the wallet is topped up', async () => {
  const gasless = await wallet(org1, 'No gas', '0', '1000');
  const id = await trade(A(), gasless, 'SELL', '2002', '0.01');
  const derived: string[] = [];
  const w = worker(funding({ wallets: derivingKeysOf(derived) }), 15_000, { fundingRetryBaseMs: 3_600_000, fundingMaxAttempts: 3 });
  try {
    await w.tick();
    const first = await db('settlement_batches').whereRaw('? = ANY(trade_ids)', [id]).first();
    expect(first).toMatchObject({ status: 'FAILED', failureReason: expect.stringContaining(`the chain refused funding from wallet ${gasless.id}`) });
    expect(first.failureReason).toMatch(/holds 0 wei of the chain's coin, short of the \d+ wei this funding may cost/);
    // Refused before signing: its key not derived, no funding transaction recorded, no nonce taken.
    expect(derived).not.toContain(gasless.id);
    expect(await db('settlement_funding_txs').where({ walletId: gasless.id })).toHaveLength(0);
    expect(await db('sender_nonces').whereILike('address', gasless.walletAddress)).toHaveLength(0);
    const queued = await db('trades').where({ id }).first();
    expect(queued).toMatchObject({ settlementStatus: 'QUEUED', settlementBatchId: null, settlementAttempts: 1 });
    expect(new Date(queued.settlementRetryAt).getTime()).toBeGreaterThan(Date.now());
    // Not batched again before its time.
    await w.tick();
    expect(await statusOf(id)).toBe('QUEUED');
    expect(await db('settlement_batches').whereRaw('? = ANY(trade_ids)', [id])).toHaveLength(1);

    const topUp = await org1.core.request('POST', '/v1/dev/faucet', { body: { blockchainId, address: gasless.walletAddress, asset: 'ETH', amount: '0.1' } });
    expect(topUp.status).toBe(200);
    await db('trades').where({ id }).update({ settlementRetryAt: db.fn.now() }); // its wait is over
    expect(await settle(w, id)).toBe('CONFIRMED');
    expect(derived).toContain(gasless.id);
  } finally {
    await w.stop();
  }
}, 120_000);

test('a trade whose funding is refused at every attempt is FAILED for good, alone, with the reason', async () => {
  const gasless = await wallet(org2, 'Never gas', '0', '1000');
  const id = await trade(A(), gasless, 'SELL', '2003', '0.01');
  const w = worker(funding(), 15_000, { fundingRetryBaseMs: 1, fundingMaxAttempts: 2 });
  try {
    expect(await settle(w, id)).toBe('FAILED');
    const last = await batchOf(id);
    expect(last).toMatchObject({ status: 'FAILED', tradeCount: 1, failureReason: expect.stringMatching(/^funding refused 2 times; the chain refused funding from wallet /) });
    expect((await db('trades').where({ id }).first()).settlementAttempts).toBe(2);
  } finally {
    await w.stop();
  }
}, 120_000);

const deployment = async () => (await t.keel.services.settlementDeployments.get(t.keel.services.networks.get(blockchainId)!))!;

/** A trade settled in which C buys ETH and A is paid USDC, and the contract to read their balances in it. */
async function settledTrade(w: SettlementWorker, price: string): Promise<{ id: string; contract: ethers.Contract; usdc: string }> {
  const id = await trade(A(), C(), 'SELL', price, '0.01');
  expect(await settle(w, id)).toBe('CONFIRMED');
  return { id, contract: new ethers.Contract((await deployment()).address, settlementInterface(), provider), usdc: ethers.getAddress(assets.USDC.address) };
}

test('a balance whose release reverts stays in the contract, and the other proceeds of the batch are released', async () => {
  const w = worker();
  const rpcUrl = k.chain.rpcUrl;
  try {
    const { id, contract, usdc } = await settledTrade(w, '2004');
    expect(await contract.balanceOf(ethers.ZeroAddress, C().walletAddress)).toBeGreaterThan(0n);
    expect(await contract.balanceOf(usdc, A().walletAddress)).toBeGreaterThan(0n);
    // C's address now refuses the coin (code that always reverts): its ETH cannot be released.
    await rpc(rpcUrl, 'hardhat_setCode', [C().walletAddress, '0x60006000fd']);
    try {
      await w.tick();
      expect((await batchOf(id)).releasedAt).not.toBeNull();
      expect(await contract.balanceOf(usdc, A().walletAddress)).toBe(0n);
      expect(await contract.balanceOf(ethers.ZeroAddress, C().walletAddress)).toBeGreaterThan(0n);
    } finally {
      await rpc(rpcUrl, 'hardhat_setCode', [C().walletAddress, '0x']);
    }
  } finally {
    await w.stop();
  }
}, 120_000);

test('a release of proceeds whose block leaves the chain, the batch\'s staying, is made again: the contract does not keep what it handed back', async () => {
  const w = worker();
  const rpcUrl = k.chain.rpcUrl;
  try {
    const { id, contract, usdc } = await settledTrade(w, '2009');
    const before = await snapshot(rpcUrl);
    await eventually(async () => {
      await w.tick();
      return (await batchOf(id)).releasedAt !== null;
    }, 30_000, 20);
    const released = await batchOf(id);
    expect(released.releaseTxHash).not.toBeNull();
    expect(await contract.balanceOf(usdc, A().walletAddress)).toBe(0n);
    // The reorg takes the release's block; the batch's block, before it, stays.
    await revert(rpcUrl, before);
    await mine(rpcUrl, 1);
    expect(await provider.getTransactionReceipt(released.releaseTxHash)).toBeNull();
    expect(await contract.balanceOf(usdc, A().walletAddress)).toBeGreaterThan(0n);
    await eventually(async () => {
      await w.tick();
      const batch = await batchOf(id);
      return batch.releasedAt !== null && batch.releaseBlockHash !== released.releaseBlockHash;
    }, 30_000, 20);
    expect(await batchOf(id)).toMatchObject({ status: 'CONFIRMED', txHash: released.txHash });
    expect(await contract.balanceOf(usdc, A().walletAddress)).toBe(0n);
  } finally {
    await w.stop();
  }
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
    const funded = await db('settlement_funding_txs').where({ batchId: confirmed.id });
    await withoutAutomine(rpcUrl, async () => {
      // A reorg as a node sees one: the blocks are gone and their transactions are back in the pool
      // (the funding mined first here, so the settlement cannot run ahead of it in one block).
      await revert(rpcUrl, before);
      for (const f of funded) await provider.broadcastTransaction(f.rawTx);
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

test('a reorged batch whose funding is not back on chain waits for it with its trades, then goes out as the same transaction', async () => {
  const rpcUrl = k.chain.rpcUrl;
  const w = worker();
  try {
    // What earlier tests left to release goes first: no operator transaction of theirs sits between the snapshot and the batch.
    await w.tick();
    const before = await snapshot(rpcUrl);
    const id = await trade(A(), C(), 'SELL', '2006', '0.01');
    expect(await settle(w, id)).toBe('CONFIRMED');
    const confirmed = await batchOf(id);
    expect(await db('settlement_funding_txs').where({ batchId: confirmed.id })).not.toHaveLength(0);
    await withoutAutomine(rpcUrl, async () => {
      // The reorg takes the funding and the settlement, and the new chain's block holds neither;
      // nothing is sent again but what the worker sends.
      await revert(rpcUrl, before);
      await mine(rpcUrl, 1);
      await w.tick();
      // The funding is in the pool again, not mined: the batch keeps its trades and sends nothing yet.
      expect((await batchById(confirmed.id)).status).toBe('REORGED');
      expect(await provider.getTransactionCount(confirmed.fromAddress, 'pending')).toBe(Number(confirmed.nonce));
      await mine(rpcUrl, 1);
      await w.tick();
      expect((await batchById(confirmed.id))).toMatchObject({ status: 'SUBMITTED', txHash: confirmed.txHash });
    });
    await settledByItsOwnTransaction(w, id, confirmed);
    expect(await db('trades').where({ id }).first()).toMatchObject({ settlementBatchId: confirmed.id, settlementAttempts: 0 });
  } finally {
    await w.stop();
  }
}, 120_000);

test('a reorged batch behind a gap (an earlier operator transaction gone with the reorg) is signed again at the next nonce, not left waiting behind it', async () => {
  const rpcUrl = k.chain.rpcUrl;
  const w = worker();
  try {
    await w.tick(); // what earlier tests left to release goes before the snapshot
    const before = await snapshot(rpcUrl);
    // An operator transaction Keel does not follow, ahead of the batch's: the reorg takes both.
    const d = await deployment();
    await (await d.operator.sendTransaction({ to: d.operator.address, value: 0n })).wait();
    const id = await trade(A(), C(), 'SELL', '2008', '0.01');
    expect(await settle(w, id)).toBe('CONFIRMED');
    const confirmed = await batchOf(id);
    await revert(rpcUrl, before);
    expect(await provider.getTransactionCount(confirmed.fromAddress, 'latest')).toBeLessThan(Number(confirmed.nonce));
    await mine(rpcUrl, 1);
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
 * A wallet's funding transaction, recorded as sent a minute ago at today's base fee, then the
 * base fee jumps tenfold: it waits in the pool, never mined at that price (automining off).
 */
async function fundingBelowTheFee(payer: { id: string }): Promise<{ nonce: number; raw: string; hash: string }> {
  const account = (await walletAccounts(db, [payer.id])).get(payer.id)!;
  const signer = await t.keel.services.sendingWallets.signer(account.organizationId, account.masterWalletId, account.addressId, provider);
  const baseFee = (await provider.getBlock('latest'))!.baseFeePerGas!;
  const nonce = await provider.getTransactionCount(account.address, 'pending');
  const raw = await signer.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, to: ethers.Wallet.createRandom().address, value: 1n, gasLimit: 21_000n, maxFeePerGas: baseFee + 1n, maxPriorityFeePerGas: 1n });
  const hash = ethers.Transaction.from(raw).hash!;
  await db('settlement_funding_txs').insert({ txHash: hash, batchId: null, blockchainId, organizationId: account.organizationId, walletId: payer.id, fromAddress: account.address, nonce, rawTx: raw, status: 'SUBMITTED', sentAt: new Date(Date.now() - 60_000) });
  await provider.broadcastTransaction(raw);
  await rpc(k.chain.rpcUrl, 'hardhat_setNextBlockBaseFeePerGas', [ethers.toQuantity(baseFee * 10n)]);
  await mine(k.chain.rpcUrl, 1);
  return { nonce, raw, hash };
}

test('a funding transaction stuck below the market fee is signed again with a higher fee and the same nonce; the one mined is followed and its gas charged once', async () => {
  const rpcUrl = k.chain.rpcUrl;
  const payer = await wallet(org1, 'Underpriced funding', '5', '1000');
  const w = worker(funding({ bumpAfterMs: 0 }));
  let original = '';
  await w.tick(); // what earlier tests left to release goes while blocks are still mined at once
  await withoutAutomine(rpcUrl, async () => {
    const { nonce, hash } = await fundingBelowTheFee(payer);
    original = hash;
    expect(await provider.getTransactionReceipt(original)).toBeNull();

    await w.tick();
    const bumped = await db('settlement_funding_txs').where({ walletId: payer.id }).first();
    expect(bumped).toMatchObject({ status: 'SUBMITTED', replacedTxHashes: [original] });
    expect(bumped.txHash).not.toBe(original);
    expect(BigInt(ethers.Transaction.from(bumped.rawTx).nonce)).toBe(BigInt(nonce));
  });
  try {
    await mine(rpcUrl, 1);
    await w.tick();
    const mined = await db('settlement_funding_txs').where({ walletId: payer.id }).first();
    expect(mined).toMatchObject({ status: 'MINED', replacedTxHashes: [original] });
    expect((await provider.getTransactionReceipt(mined.txHash))?.status).toBe(1);
    expect(await provider.getTransactionReceipt(original)).toBeNull();
    expect(await db('ledger_entries').whereLike('idempotencyKey', `debit:settlement-gas:${mined.txHash}:%`)).toHaveLength(1);
  } finally {
    await w.stop();
  }
}, 120_000);

test('an earlier, cheaper signing of a bumped funding transaction mined after all is followed, its own bytes and gas included', async () => {
  const rpcUrl = k.chain.rpcUrl;
  const payer = await wallet(org1, 'Earlier signing mined', '5', '1000');
  const w = worker(funding({ bumpAfterMs: 0 }));
  await w.tick();
  let original = '';
  let bumped = '';
  await withoutAutomine(rpcUrl, async () => {
    const { raw, hash } = await fundingBelowTheFee(payer);
    original = hash;
    await w.tick();
    bumped = (await db('settlement_funding_txs').where({ walletId: payer.id }).first()).txHash;
    expect(bumped).not.toBe(original);
    // The node forgets the bump and mines the first signing once the fee falls back.
    await rpc(rpcUrl, 'hardhat_dropTransaction', [bumped]);
    await provider.broadcastTransaction(raw);
    await rpc(rpcUrl, 'hardhat_setNextBlockBaseFeePerGas', [ethers.toQuantity(1n)]);
    await mine(rpcUrl, 1);
    expect((await provider.getTransactionReceipt(original))?.status).toBe(1);
  });
  try {
    await w.tick();
    const mined = await db('settlement_funding_txs').where({ walletId: payer.id }).first();
    expect(mined).toMatchObject({ status: 'MINED', txHash: original, replacedTxHashes: [bumped] });
    expect(ethers.Transaction.from(mined.rawTx).hash).toBe(original);
    expect(await db('ledger_entries').whereLike('idempotencyKey', `debit:settlement-gas:${original}:%`)).toHaveLength(1);
    expect(await db('ledger_entries').whereLike('idempotencyKey', `debit:settlement-gas:${bumped}:%`)).toHaveLength(0);
  } finally {
    await w.stop();
  }
}, 120_000);

test('a funding transaction that is never mined holds back its own wallet\'s trades only: another wallet\'s batch settles, and the stuck one is not counted as a refusal', async () => {
  const stuck = await wallet(org1, 'Stuck funding', '5', '1000');
  const account = (await walletAccounts(db, [stuck.id])).get(stuck.id)!;
  const signer = await t.keel.services.sendingWallets.signer(account.organizationId, account.masterWalletId, account.addressId, provider);
  // A nonce far ahead of the wallet's: it can never be mined (an automining node will not even hold it, so every step sends it again).
  const nonce = (await provider.getTransactionCount(account.address, 'pending')) + 5;
  const fees = await provider.getFeeData();
  const raw = await signer.signTransaction({ type: 2, chainId: CHAIN_ID, nonce, to: ethers.Wallet.createRandom().address, value: 1n, gasLimit: 21_000n, maxFeePerGas: fees.maxFeePerGas!, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! });
  const txHash = ethers.Transaction.from(raw).hash!;
  await db('settlement_funding_txs').insert({ txHash, batchId: null, blockchainId, organizationId: account.organizationId, walletId: stuck.id, fromAddress: account.address, nonce, rawTx: raw, status: 'SIGNED' });

  const held = await trade(stuck, C(), 'SELL', '2010', '0.01');
  const other = await trade(A(), C(), 'SELL', '2011', '0.01');
  const w = worker();
  try {
    expect(await settle(w, other)).toBe('CONFIRMED');
    expect(['SIGNED', 'SUBMITTED']).toContain((await db('settlement_funding_txs').where({ txHash }).first()).status);
    expect(await db('trades').where({ id: held }).first()).toMatchObject({ settlementStatus: 'QUEUED', settlementAttempts: 0 });
  } finally {
    await w.stop();
  }
}, 120_000);
