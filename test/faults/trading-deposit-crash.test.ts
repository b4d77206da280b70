import { randomUUID } from 'node:crypto';
import { ethers } from 'ethers';
import type { Knex } from 'knex';
import { OwnChainKeel, startKeelOnOwnChain } from '../support/own-chain';
import { KeelProcess, startKeelProcess, stopKeelProcess } from '../support/keel-process';
import { ApiClient } from '../support/api-client';
import { eventually } from '../support/eventually';
import { fundedWallet } from '../support/settlement-trading';
import { settlementInterface } from '../../src/modules/settlement/settlement-contract';

/**
 * Fault: a Keel process (orderbook role: the pro host) is killed with SIGKILL right after a deposit to trading commits
 * and before it answers (failpoint after-commit:trading.deposit). The deposit is the one-transaction
 * path: USDC with its EIP-2612 permit signed into the recorded call, and the chain's coin with it
 * (coinAmount). The client retries with the same Idempotency-Key against the live Keel of the same
 * database, whose transaction sender sends what was recorded.
 * Survives: one deposit recorded (the token's and the coin's trading transfers on one line), one
 * transaction from the wallet (its nonce moved by one), the contract credited once, the retry gets
 * the committed deposit, and the ledger equals the contract.
 */
const CHAIN_ID = 31_399;

let k: OwnChainKeel;
let db: Knex;
let child: KeelProcess | undefined;

beforeAll(async () => {
  k = await startKeelOnOwnChain(CHAIN_ID, 1, { SETTLEMENT_ENABLED: true, SETTLEMENT_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 100, IDEMPOTENCY_LOCK_SECONDS: 1 });
  db = k.t.keel.platform.db;
  await eventually(() => db('settlement_contracts').where({ blockchainId: k.blockchainId }).first(), 30_000);
}, 120_000);
afterAll(async () => {
  if (child) await stopKeelProcess(child.child, 'SIGKILL');
  await k?.stop();
});

function exitOf(c: KeelProcess['child']): Promise<NodeJS.Signals | number | null> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve(c.signalCode ?? c.exitCode);
  return new Promise((resolve) => c.once('exit', (code, signal) => resolve(signal ?? code)));
}

test('a deposit to trading (permit and coin in one transaction) committed just before a SIGKILL is sent once and replayed to the retry', async () => {
  const { org, blockchainId, assets, t } = k;
  const wallet = await fundedWallet(blockchainId, org, 'Crash deposit', '3', '1000');
  // The faucet's deposits credited to custody first.
  await eventually(async () => (await db('ledger_balances').where({ walletId: wallet.id, assetId: assets.USDC.id, account: 'custody' }).first())?.available === '1000000000', 60_000, 200);
  await eventually(async () => (await db('ledger_balances').where({ walletId: wallet.id, assetId: assets.ETH.id, account: 'custody' }).first()) !== undefined, 60_000, 200);

  child = await startKeelProcess(t.config, 'orderbook', { KEEL_CHAINS: t.config.KEEL_CHAINS ?? '', SETTLEMENT_ENABLED: 'true', RATE_LIMIT_SCALE: '100', IDEMPOTENCY_LOCK_SECONDS: '1', KEEL_FAILPOINTS: 'after-commit:trading.deposit' });
  const dying = new ApiClient(child.proUrl!, org.pro.credentials);
  const key = randomUUID();
  const ask = (client: ApiClient) => client.request('POST', `/v1/orderbook/wallets/${wallet.id}/trading/deposits`, { body: { assetId: assets.USDC.id, amount: '1000', coinAmount: '1' }, headers: { 'Idempotency-Key': key } });

  await expect(ask(dying)).rejects.toThrow();
  expect(await exitOf(child.child)).toBe('SIGKILL');
  // Recorded before any broadcast: the token's and the coin's trading transfers on one line, whose call carries the permit.
  const recorded = await db('trading_transfers').where({ walletId: wallet.id });
  expect(recorded).toHaveLength(2);
  expect(new Set(recorded.map((r: { depositItemId: string }) => r.depositItemId)).size).toBe(1);
  const items = await db('transfer_items').where({ transferId: recorded[0].transferId });
  expect(items.map((i: { callData: string }) => i.callData.slice(0, 10))).toEqual([settlementInterface().getFunction('depositWithCoin')!.selector]);

  const retry = await eventually(async () => {
    const res = await ask(org.pro);
    return res.status === 201 ? res : undefined;
  }, 30_000, 200);
  const tokenRow = recorded.find((r: { assetId: string }) => r.assetId === assets.USDC.id);
  expect(retry.body.data.id).toBe(tokenRow.id);
  await eventually(async () => (await db('trading_transfers').where({ walletId: wallet.id, status: 'CONFIRMED' })).length === 2, 60_000, 200);
  // Sent once: one transaction from the wallet, the contract credited once, nothing more recorded.
  expect(await db('trading_transfers').where({ walletId: wallet.id })).toHaveLength(2);
  const provider = t.keel.services.networks.get(blockchainId)!.provider;
  expect(await provider.getTransactionCount(wallet.walletAddress)).toBe(1);
  const contract = new ethers.Contract((await db('settlement_contracts').where({ blockchainId }).first()).address, settlementInterface(), provider);
  expect(await contract.balanceOf(assets.USDC.address, wallet.walletAddress)).toBe(1_000_000_000n);
  expect(await contract.balanceOf(ethers.ZeroAddress, wallet.walletAddress)).toBe(ethers.parseEther('1'));
  const again = await ask(org.pro);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.body.data.id).toBe(tokenRow.id);
  // The ledger equals the chain: trading = the contract, custody = the address.
  const network = t.keel.services.networks.get(blockchainId)!;
  await eventually(async () => (await t.keel.services.settlementReconciler.reconcile(network, {})).differences.length === 0, 30_000, 200);
}, 240_000);
