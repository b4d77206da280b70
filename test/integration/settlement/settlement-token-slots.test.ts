import { ethers } from 'ethers';
import type { Knex } from 'knex';
import type { TestOrg } from '../../support/keel';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { eventually } from '../../support/eventually';
import { createEthUsdcMarket, depositToTrading, ethUsdcTrade, fundedWallet } from '../../support/settlement-trading';
import { mine, setAutomine } from '../../support/chain-controls';
import { rpc } from '../../../src/platform/chain/json-rpc';
import { NATIVE_TOKEN, settlementInterface } from '../../../src/modules/settlement/settlement-contract';
import { loadArtifact } from '../../../src/platform/chain/artifacts';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';

/**
 * A batch's mined transaction that reverted is acted on only once it is as deep as the chain's
 * confirmations (a reorganisation may mine it elsewhere, with another outcome). Then a batch the
 * contract refused because its token slots changed under it is not at fault: anyone can give a new
 * token the next index, with a deposit of nothing, and so fill the half of a slot the batch named as
 * free; the batch is encoded again and sent at a new nonce. A batch that reverted for its own trade
 * is FAILED with the contract's reason.
 */
const CHAIN_ID = 31_374;
/** Two: a test sees a mined transaction wait one block before it is acted on. */
const CONFIRMATIONS = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let k: OwnChainKeel;
let org: TestOrg;
let db: Knex;
let rpcUrl: string;
let provider: ethers.JsonRpcProvider;
let contract: ethers.Contract;
let stranger: ethers.NonceManager;
let assets: Record<string, { id: string; address: string }>;
let seller: { id: string; walletAddress: string };
let buyer: { id: string; walletAddress: string };

const batchOf = async (tradeId: string) => db('settlement_batches').where({ id: (await db('trades').where({ id: tradeId }).first()).settlementBatchId }).first();
const transitionsOf = async (batchId: string) => db('settlement_batch_transitions').where({ batchId }).orderBy('id');
const steps = (rows: { fromStatus: string | null; toStatus: string }[]) => rows.map((r) => `${r.fromStatus ?? '-'}>${r.toStatus}`);

/** A token nobody trades, deployed by the stranger. */
async function strangersToken(name: string): Promise<string> {
  const { abi, bytecode } = loadArtifact('TestTokenPlain');
  const token = await new ethers.ContractFactory(abi, bytecode, stranger).deploy(name, name, 10n ** 18n);
  await token.waitForDeployment();
  return token.getAddress();
}

/** Takes the chain's settlement lease away from the worker: nothing is batched or sent until the lease is given back. */
async function pause(): Promise<void> {
  await db.raw(
    `INSERT INTO settlement_leases (blockchain_id, holder, expires_at) VALUES (?, 'test', now() + interval '1 hour')
     ON CONFLICT (blockchain_id) DO UPDATE SET holder = 'test', expires_at = now() + interval '1 hour'`,
    [k.blockchainId],
  );
  await sleep(800); // a step that began before the lease moved finishes
}

/** One trade of the seller's ETH, its batch signed and in the node's pool, not mined (automine is off until the caller turns it on). */
async function tradeWaitingInPool(): Promise<{ tradeId: string; sent: { id: string; txHash: string; nonce: string } }> {
  await pause();
  const tradeId = await ethUsdcTrade(db, { org, id: seller.id }, { org, id: buyer.id }, 'SELL', '2000', '0.01');
  await setAutomine(rpcUrl, false);
  await db('settlement_leases').where({ holder: 'test' }).delete();
  const sent = await eventually(async () => {
    const b = await batchOf(tradeId);
    return b?.status === 'SUBMITTED' ? b : undefined;
  }, 30_000, 100);
  await eventually(() => provider.getTransaction(sent.txHash), 10_000, 100);
  return { tradeId, sent };
}

beforeAll(async () => {
  k = await startKeelOnOwnChain(CHAIN_ID, CONFIRMATIONS, {
    SETTLEMENT_ENABLED: true,
    SETTLEMENT_BATCH_SIZE: 50,
    SETTLEMENT_BATCH_MAX_AGE_MS: 300,
    SETTLEMENT_POLL_INTERVAL_MS: 100,
    SETTLEMENT_FEE_BUMP_AFTER_MS: 600_000,
    TRANSFER_POLL_INTERVAL_MS: 100,
    CHAIN_POLL_INTERVAL_MS: 100,
    RATE_LIMIT_SCALE: 1000,
  });
  ({ org, assets } = k);
  db = k.t.keel.platform.db;
  rpcUrl = k.chain.rpcUrl;
  provider = new ethers.JsonRpcProvider(rpcUrl, CHAIN_ID, { staticNetwork: true, cacheTimeout: -1 });
  stranger = new ethers.NonceManager(new ethers.Wallet(devChainAccount(9).privateKey, provider));
  // The chain mines only on a transaction: blocks go on in the background while the wallets are funded and deposit.
  const miner = setInterval(() => void mine(rpcUrl, 1).catch(() => undefined), 250);
  try {
    await createEthUsdcMarket(k.t, assets);
    const { address } = await eventually(() => db('settlement_contracts').where({ blockchainId: k.blockchainId }).first(), 30_000);
    contract = new ethers.Contract(address, settlementInterface(), stranger);
    // The stranger's token arrives first (index 1, beside the coin): USDC then gets index 2, alone in its slot.
    await (await contract.deposit(await strangersToken('J1'), 0n)).wait();
    seller = await fundedWallet(k.blockchainId, org, 'Seller', '20', '100000');
    buyer = await fundedWallet(k.blockchainId, org, 'Buyer', '20', '100000');
    for (const w of [seller, buyer]) {
      await depositToTrading(org, w.id, assets.ETH.id, '10');
      await depositToTrading(org, w.id, assets.USDC.id, '50000');
    }
  } finally {
    clearInterval(miner);
  }
  expect(Number(await contract.tokenIndex(assets.USDC.address))).toBe(2);
}, 600_000);
afterAll(async () => {
  provider?.destroy();
  await k?.stop();
});

test("a stranger's deposit of nothing of a new token, mined just before a one-trade batch, fills the half of the slot the batch named as free: the reverted batch is encoded again, sent at a new nonce and CONFIRMED", async () => {
  const junk = await strangersToken('J2');
  const { tradeId, sent } = await tradeWaitingInPool();
  try {
    // With a higher tip, ahead of the batch in the same block: the junk token takes index 3.
    await stranger.sendTransaction({ to: await contract.getAddress(), data: contract.interface.encodeFunctionData('deposit', [junk, 0n]), maxPriorityFeePerGas: ethers.parseUnits('50', 'gwei'), maxFeePerGas: ethers.parseUnits('200', 'gwei'), gasLimit: 200_000n });
    await mine(rpcUrl, 1);
    expect((await provider.getTransactionReceipt(sent.txHash))!.status).toBe(0);
    expect(Number(await contract.tokenIndex(junk))).toBe(3);
    // One block deep of two: not acted on yet.
    await sleep(1_000);
    expect((await batchOf(tradeId)).status).toBe('SUBMITTED');
    await mine(rpcUrl, 1);
    const again = await eventually(async () => {
      const b = await batchOf(tradeId);
      return b.status === 'SUBMITTED' && b.txHash !== sent.txHash ? b : undefined;
    }, 30_000, 100);
    expect(Number(again.nonce)).toBe(Number(sent.nonce) + 1);
    await eventually(() => provider.getTransaction(again.txHash), 10_000, 100);
    await mine(rpcUrl, CONFIRMATIONS);
  } finally {
    await setAutomine(rpcUrl, true);
  }
  const done = await eventually(async () => {
    const b = await batchOf(tradeId);
    return b.status === 'CONFIRMED' ? b : undefined;
  }, 30_000, 100);
  const trade = await db('trades').where({ id: tradeId }).first();
  expect(trade.settlementStatus).toBe('CONFIRMED');
  expect(await contract.isSettled(BigInt(trade.settlementKey))).toBe(true);
  expect((await provider.getTransactionReceipt(done.txHash))!.status).toBe(1);
  // The reverted transaction is named in the record, with the contract's true reason, and followed no more.
  expect(done.replacedTxHashes).not.toContain(sent.txHash);
  const record = await transitionsOf(done.id);
  expect(steps(record)).toEqual(['->BATCHED', 'BATCHED>SUBMITTED', 'SUBMITTED>REPLACED', 'REPLACED>SUBMITTED', 'SUBMITTED>CONFIRMED']);
  expect(record[2].detail).toContain(sent.txHash);
  expect(record[2].detail).toContain(`WrongTokenPair(${ethers.getAddress(assets.USDC.address)}, ${NATIVE_TOKEN})`);
  // Ledger = contract: the trade moved both.
  await eventually(async () => (await k.t.keel.services.settlementReconciler.reconcile(k.t.keel.services.networks.get(k.blockchainId)!, {})).differences.length === 0, 30_000, 200);
}, 120_000);

test('a one-trade batch whose transaction reverts for its own trade (the seller holds nothing in the contract when it is mined) is FAILED with the contract\'s reason once as deep as the confirmations, and sent no more', async () => {
  const address = await contract.getAddress();
  const held = (await contract.balanceOf(NATIVE_TOKEN, seller.walletAddress)) as bigint;
  // The seller's slot of the coin in the contract's storage (balanceSlots[seller][0], at a declaration index found by its value).
  const coinSlot = (declared: number) => ethers.keccak256(ethers.AbiCoder.defaultAbiCoder().encode(['uint256', 'bytes32'], [0, ethers.keccak256(ethers.AbiCoder.defaultAbiCoder().encode(['address', 'uint256'], [seller.walletAddress, declared]))]));
  let where: string | undefined;
  for (let declared = 0; declared < 32 && !where; declared++) {
    if ((BigInt(await provider.getStorage(address, coinSlot(declared))) & ((1n << 128n) - 1n)) === held) where = coinSlot(declared);
  }
  expect(where).toBeDefined();
  const { tradeId, sent } = await tradeWaitingInPool();
  try {
    // Emptied behind everyone's back after the batch was simulated and signed: it reverts on chain.
    await rpc(rpcUrl, 'hardhat_setStorageAt', [address, where, ethers.ZeroHash]);
    await mine(rpcUrl, 1);
    expect((await provider.getTransactionReceipt(sent.txHash))!.status).toBe(0);
    await sleep(1_000);
    expect((await batchOf(tradeId)).status).toBe('SUBMITTED');
    await mine(rpcUrl, 1);
    const failed = await eventually(async () => {
      const b = await batchOf(tradeId);
      return b.status === 'FAILED' ? b : undefined;
    }, 30_000, 100);
    expect(failed).toMatchObject({ txHash: sent.txHash, nonce: sent.nonce });
    expect(failed.failureReason).toBe(`InsufficientBalance(${ethers.getAddress(seller.walletAddress)}, ${NATIVE_TOKEN}, 0, ${ethers.parseEther('0.01')})`);
    expect(steps(await transitionsOf(failed.id))).toEqual(['->BATCHED', 'BATCHED>SUBMITTED', 'SUBMITTED>FAILED']);
    // Alone, it has no part to split into: nothing is sent again.
    await sleep(1_000);
    expect(await db('settlement_batches').where({ parentBatchId: failed.id })).toEqual([]);
    expect((await db('trades').where({ id: tradeId }).first()).settlementStatus).toBe('FAILED');
    expect(await provider.getTransactionCount(failed.fromAddress, 'pending')).toBe(Number(sent.nonce) + 1);
  } finally {
    await setAutomine(rpcUrl, true);
  }
}, 120_000);
