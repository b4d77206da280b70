import { ethers } from 'ethers';
import { TestKeel, TestOrg } from '../../support/keel';
import { useTestKeel } from '../../support/use-test-keel';
import { ApiClient } from '../../support/api-client';
import { eventually } from '../../support/eventually';
import type { DevChain } from '../../../src/platform/chain/devchain';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { fundFromFaucet } from '../../../src/platform/chain/faucet';
import { mine, revert, snapshot } from '../../support/chain-controls';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { keelDevFund } from '../../support/keel-cli';
import { DevFaucetService } from '../../../src/modules/dev-faucet/dev-faucet.service';
import { DepositWatcher } from '../../../src/modules/deposits/deposit-watcher';
import { MasterWalletModel } from '../../../src/modules/wallets/wallet.model';

const FAST_WATCH = { RATE_LIMIT_SCALE: 100, CHAIN_POLL_INTERVAL_MS: 100 };

interface Wallet {
  id: string;
  walletAddress: string;
  blockchainId: string;
}
interface Address {
  id: string;
  address: string;
}

async function createWallet(org: TestOrg, blockchainId?: string): Promise<Wallet> {
  if (!blockchainId) blockchainId = (await org.core.request('GET', '/v1/blockchains')).body.data[0].id;
  const res = await org.core.request('POST', '/v1/master-wallets', { body: { blockchainId, name: 'Treasury' } });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function createAddress(org: TestOrg, walletId: string, name = 'Customer 1'): Promise<Address> {
  const res = await org.core.request('POST', `/v1/master-wallets/${walletId}/addresses`, { body: { name } });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function history(client: ApiClient, path: string, query = '') {
  const res = await client.request('GET', `${path}/transactions${query}`);
  expect(res.status).toBe(200);
  return res.body as { transfer: any[]; pageInfo: { hasMore: boolean; nextCursor: string | null }; totalCount: number };
}

async function events(t: TestKeel, type: string): Promise<any[]> {
  const rows = await t.keel.platform.db('outbox_events').where({ type }).orderBy('createdAt');
  return rows.map((r) => (typeof r.envelope === 'string' ? JSON.parse(r.envelope) : r.envelope));
}

describe('deposits on the shared dev chains', () => {
  const { t, orgs: [org, other] } = useTestKeel(FAST_WATCH, { orgs: 2 });

  test('a native and an ERC-20 deposit to a deposit address are recorded once confirmed and reported as address.incoming_transfer', async () => {
    const wallet = await createWallet(org);
    const address = await createAddress(org, wallet.id);
    const usdc = await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: wallet.blockchainId, address: address.address, asset: 'USDC', amount: '250.5' } });
    expect(usdc.status).toBe(200);
    expect(usdc.body.data).toMatchObject({ symbol: 'USDC', amount: '250.5', to: address.address });
    await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: wallet.blockchainId, address: address.address, amount: '0.5' } });

    const list = await eventually(async () => {
      const h = await history(org.core, `/v1/addresses/${address.id}`, '?sort=ASC');
      return h.totalCount === 2 && h;
    });
    const [token, native] = list.transfer;
    expect(token).toMatchObject({
      category: 'erc20',
      direction: 'incoming',
      status: 'CONFIRMED',
      hash: usdc.body.data.txHash,
      to: address.address,
      from: devChainAccount(0).address,
      symbol: 'USDC',
      value: 250.5,
      rawContract: { value: '250500000', decimal: '6', address: token.asset.address },
      addressId: address.id,
      masterWalletId: wallet.id,
    });
    expect(Number(token.blockNum)).toBeGreaterThan(0);
    expect(new Date(token.timestamp).toISOString()).toBe(token.timestamp);
    expect(native).toMatchObject({ category: 'external', symbol: 'ETH', value: 0.5, logIndex: -1, rawContract: { value: '500000000000000000', decimal: '18' } });

    const reported = (await events(t, 'address.incoming_transfer')).filter((e) => e.data.to === address.address);
    expect(reported).toHaveLength(2);
    expect(reported[0].data).toEqual({
      id: token.id,
      hash: token.hash,
      logIndex: token.logIndex,
      blockNumber: token.blockNum,
      blockHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      from: token.from,
      to: address.address,
      value: '250.5',
      category: 'erc20',
      asset: { id: token.asset.id, symbol: 'USDC', decimals: 6 },
      blockchain: { id: wallet.blockchainId, name: expect.any(String), slug: expect.any(String) },
      wallet: { id: address.id, name: 'Customer 1', walletAddress: address.address, masterWalletId: wallet.id },
      rawContract: { address: token.asset.address, decimals: 6, rawValue: '250500000' },
    });

    // The master wallet's history includes its addresses' transfers.
    expect((await history(org.core, `/v1/master-wallets/${wallet.id}`)).totalCount).toBe(2);
  });

  test('a deposit to the master wallet address is master.incoming_transfer, and `keel dev fund` walks the same path', async () => {
    const wallet = await createWallet(org);
    const funded = await keelDevFund(t.config, wallet.walletAddress, 'DAI', '12.25');
    expect(funded).toMatchObject({ symbol: 'DAI', amount: '12.25', to: wallet.walletAddress });

    const list = await eventually(async () => {
      const h = await history(org.core, `/v1/master-wallets/${wallet.id}`);
      return h.totalCount === 1 && h;
    });
    expect(list.transfer[0]).toMatchObject({ hash: funded.txHash, symbol: 'DAI', value: 12.25, addressId: null, category: 'erc20' });
    const reported = (await events(t, 'master.incoming_transfer')).filter((e) => e.data.to === wallet.walletAddress);
    expect(reported).toHaveLength(1);
    expect(reported[0].data.wallet).toEqual({ id: wallet.id, name: 'Treasury', walletAddress: wallet.walletAddress, masterWalletId: wallet.id });
  });

  test('a transfer between two wallets of the organisation is recorded on both sides as internal', async () => {
    const wallet = await createWallet(org);
    const address = await createAddress(org, wallet.id);
    await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: wallet.blockchainId, address: address.address, amount: '1' } });
    const row = await MasterWalletModel.query(t.keel.platform.db).findById(wallet.id);
    const network = t.keel.services.networks.get(wallet.blockchainId)!;
    const signer = await t.keel.services.walletKeys.signer(wallet.id, row!.sealedMnemonic, 1, network.provider);
    expect(signer.address).toBe(address.address);
    const tx = await signer.sendTransaction({ to: wallet.walletAddress, value: ethers.parseEther('0.25') });
    await tx.wait();

    const outgoing = await eventually(async () => {
      const h = await history(org.core, `/v1/addresses/${address.id}`, '?direction=outgoing');
      return h.totalCount === 1 && h.transfer[0];
    });
    expect(outgoing).toMatchObject({ hash: tx.hash, direction: 'outgoing', category: 'internal', from: address.address, to: wallet.walletAddress, value: 0.25 });
    const incoming = await history(org.core, `/v1/master-wallets/${wallet.id}`, '?direction=incoming');
    expect(incoming.transfer.map((r) => [r.hash, r.category, r.addressId])).toContainEqual([tx.hash, 'internal', null]);
  });

  test('a transfer of 0 USDC to a deposit address (anyone can send one) is not recorded and does not stop the watcher: the next deposit is credited', async () => {
    const wallet = await createWallet(org);
    const address = await createAddress(org, wallet.id, 'Zero');
    const usdc = (await org.core.get(`/v1/assets?blockchainId=${wallet.blockchainId}&symbol=USDC`)).body.data[0];
    const stranger = new ethers.Wallet(devChainAccount(9).privateKey, t.keel.services.networks.get(wallet.blockchainId)!.provider);
    const token = new ethers.Contract(usdc.address, ['function transfer(address to, uint256 amount) returns (bool)'], stranger);
    await (await token.transfer(address.address, 0n)).wait();
    const deposit = await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: wallet.blockchainId, address: address.address, asset: 'USDC', amount: '5' } });
    expect(deposit.status).toBe(200);

    const list = await eventually(async () => {
      const h = await history(org.core, `/v1/addresses/${address.id}`);
      return h.totalCount > 0 && h;
    });
    expect(list.transfer.map((r) => [r.hash, r.value])).toEqual([[deposit.body.data.txHash, 5]]);
    expect((await t.keel.services.ledger.balance(t.keel.platform.db, address.id, usdc.id, 'custody')).available).toBe(5_000_000n);
  });

  test('history pages by cursor in both orders, and refuses bad parameters', async () => {
    const wallet = await createWallet(org);
    for (const amount of ['1', '2', '3']) {
      await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: wallet.blockchainId, address: wallet.walletAddress, asset: 'USDT', amount } });
    }
    const path = `/v1/master-wallets/${wallet.id}`;
    await eventually(async () => (await history(org.core, path)).totalCount === 3);

    const first = await history(org.core, path, '?sort=ASC&limit=2');
    expect(first.transfer.map((r) => r.value)).toEqual([1, 2]);
    expect(first.pageInfo.hasMore).toBe(true);
    const second = await history(org.core, path, `?sort=ASC&limit=2&cursor=${first.pageInfo.nextCursor}`);
    expect(second.transfer.map((r) => r.value)).toEqual([3]);
    expect(second.pageInfo).toEqual({ hasMore: false, nextCursor: null });
    expect(second.totalCount).toBe(3);
    expect((await history(org.core, path, '?sort=DESC')).transfer.map((r) => r.value)).toEqual([3, 2, 1]);
    expect((await history(org.core, path, '?direction=outgoing')).totalCount).toBe(0);

    // Crafted cursors of the right shape: a block number beyond bigint, an id that is not a UUID.
    const crafted = (cursor: unknown[]) => `cursor=${Buffer.from(JSON.stringify(cursor)).toString('base64url')}`;
    const badCursors = [crafted(['9999999999999999999', '7c9e6679-7425-40de-944b-e07fc1f90ae7']), crafted(['1', '-'.repeat(36)])];
    for (const [query, field] of [['direction=sideways', 'direction'], ['sort=UP', 'sort'], ['cursor=bm9wZQ', 'cursor'], ...badCursors.map((c) => [c, 'cursor']), ['limit=0', 'limit'], ['assetId=usdt', 'assetId']]) {
      const res = await org.core.request('GET', `${path}/transactions?${query}`);
      expect(res.status).toBe(422);
      expect(['VALIDATION_ERROR', 'INVALID_FIELD']).toContain(res.body.error.code);
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toEqual([field]);
    }
  });

  test('two watchers on one chain (two worker nodes) still record and report each deposit once', async () => {
    const wallet = await createWallet(org);
    const address = await createAddress(org, wallet.id, 'Shared');
    const { services, platform } = t.keel;
    const config = t.config;
    const network = services.networks.get(wallet.blockchainId)!;
    const rival = new DepositWatcher(network, services.chainActivity, services.chains, services.watchedWallets, { pollIntervalMs: 50, batchBlocks: config.CHAIN_SCAN_BATCH_BLOCKS, reorgWindowBlocks: config.CHAIN_REORG_WINDOW_BLOCKS }, platform.logger);
    const loop = rival.start();
    try {
      const hashes: string[] = [];
      for (const amount of ['1', '2', '3']) {
        hashes.push((await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: wallet.blockchainId, address: address.address, asset: 'USDC', amount } })).body.data.txHash);
      }
      await eventually(async () => (await history(org.core, `/v1/addresses/${address.id}`)).totalCount === 3);
      const reported = (await events(t, 'address.incoming_transfer')).filter((e) => e.data.to === address.address);
      expect(reported.map((e) => e.data.hash).sort()).toEqual([...hashes].sort());
      const credited = await services.ledger.balance(platform.db, address.id, reported[0].data.asset.id, 'custody');
      expect(credited.available).toBe(6_000_000n);
    } finally {
      await loop.stop();
    }
  });

  test("another organisation's wallet or address is 404", async () => {
    const wallet = await createWallet(org);
    const address = await createAddress(org, wallet.id);
    expect((await other.core.request('GET', `/v1/master-wallets/${wallet.id}/transactions`)).status).toBe(404);
    expect((await other.core.request('GET', `/v1/addresses/${address.id}/transactions`)).status).toBe(404);
  });

  test('the faucet refuses bad input, and in production refuses to run at all', async () => {
    const bad = await org.core.request('POST', '/v1/dev/faucet', { body: { address: '0x1234', amount: '1' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_ADDRESS');
    const tooMuch = await org.core.request('POST', '/v1/dev/faucet', { body: { address: devChainAccount(5).address, asset: 'USDC', amount: '1000000.1' } });
    expect(tooMuch.status).toBe(422);
    const unknownAsset = await org.core.request('POST', '/v1/dev/faucet', { body: { address: devChainAccount(5).address, asset: 'DOGE', amount: '1' } });
    expect(unknownAsset.status).toBe(422);
    const readOnly = await org.core.with({ apiKey: 'nope', orgId: org.orgId }).request('POST', '/v1/dev/faucet', { body: { address: devChainAccount(5).address, amount: '1' } });
    expect(readOnly.status).toBe(401);

    const production = new DevFaucetService('production', t.keel.services.networks, t.keel.services.chains);
    await expect(production.fund({ address: devChainAccount(5).address, amount: '1' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});

describe('deposits on a chain of their own (confirmations, reorgs, restarts)', () => {
  const CONFIRMATIONS = 3;
  let k: OwnChainKeel;
  let chain: DevChain;
  let t: TestKeel;
  let org: TestOrg;
  let wallet: Wallet;
  let address: Address;

  beforeAll(async () => {
    k = await startKeelOnOwnChain(31_339, CONFIRMATIONS, FAST_WATCH);
    ({ chain, t, org } = k);
    wallet = await createWallet(org);
    address = await createAddress(org, wallet.id);
  }, 60_000);
  afterAll(() => k?.stop());

  const fund = (amount: string, asset = 'USDC', to = address.address) => org.core.request('POST', '/v1/dev/faucet', { body: { address: to, asset, amount } }).then((r) => r.body.data.txHash as string);
  const settle = () => new Promise((r) => setTimeout(r, 600));
  const confirmed = async () => (await history(org.core, `/v1/addresses/${address.id}`, '?status=CONFIRMED')).transfer;

  test('a deposit is recorded only when its block has the confirmation count', async () => {
    const hash = await fund('10');
    await settle();
    expect(await confirmed()).toHaveLength(0); // 1 confirmation
    await mine(chain.rpcUrl, 1);
    await settle();
    expect(await confirmed()).toHaveLength(0); // 2 confirmations
    await mine(chain.rpcUrl, 1);
    const [deposit] = await eventually(async () => {
      const list = await confirmed();
      return list.length === 1 && list;
    });
    expect(deposit).toMatchObject({ hash, value: 10 });
  });

  test('a reorg that drops the deposit block marks the deposit REVERTED and reports it; it is never counted twice', async () => {
    const before = await snapshot(chain.rpcUrl);
    const hash = await fund('7');
    await mine(chain.rpcUrl, CONFIRMATIONS);
    await eventually(async () => (await confirmed()).some((d) => d.hash === hash));

    await revert(chain.rpcUrl, before);
    // The new fork: another transaction at the same height, then enough blocks to pass the old head.
    await fundFromFaucet(chain.rpcUrl, devChainAccount(0).privateKey, { to: devChainAccount(7).address, amount: '1' });
    await mine(chain.rpcUrl, CONFIRMATIONS + 2);

    const reverted = await eventually(async () => {
      const h = await history(org.core, `/v1/addresses/${address.id}`, '?status=REVERTED');
      return h.transfer.find((d) => d.hash === hash);
    });
    expect(reverted).toMatchObject({ status: 'REVERTED', value: 7 });
    expect((await confirmed()).map((d) => d.hash)).not.toContain(hash);
    const reports = (await events(t, 'address.incoming_transfer_reverted')).filter((e) => e.data.hash === hash);
    expect(reports).toHaveLength(1);
    expect(reports[0].data).toMatchObject({ value: '7', wallet: { id: address.id } });
    // The trading ledger took the credit back: only the 10 USDC of the first test remain.
    const ledger = await t.keel.services.ledger.balance(t.keel.platform.db, address.id, reverted.asset.id, 'custody');
    expect(ledger.available).toBe(10_000_000n);

    // The chain goes on; more blocks change nothing.
    await mine(chain.rpcUrl, 3);
    await settle();
    const all = await history(org.core, `/v1/addresses/${address.id}`);
    expect(all.transfer.filter((d) => d.hash === hash)).toHaveLength(1);
  });

  test('after a restart the watcher resumes from its cursor: deposits made while it was down are recorded once', async () => {
    const count = (await history(org.core, `/v1/addresses/${address.id}`)).totalCount;
    await t.restart({ KEEL_ROLES: 'api' });
    org = { ...org, core: new ApiClient(t.coreUrl, org.core.credentials) };
    const hashes = [await fund('1.5'), await fund('0.1', 'ETH'), await fund('2', 'DAI', wallet.walletAddress)];
    await mine(chain.rpcUrl, CONFIRMATIONS);
    await settle();
    expect((await history(org.core, `/v1/addresses/${address.id}`)).totalCount).toBe(count);

    await t.restart({ KEEL_ROLES: 'api,worker' });
    org = { ...org, core: new ApiClient(t.coreUrl, org.core.credentials) };
    const recorded = await eventually(async () => {
      const h = await history(org.core, `/v1/master-wallets/${wallet.id}`, '?limit=100');
      return hashes.every((x) => h.transfer.some((d) => d.hash === x)) && h;
    });
    for (const x of hashes) expect(recorded.transfer.filter((d) => d.hash === x)).toHaveLength(1);
    await mine(chain.rpcUrl, 2);
    await settle();
    expect((await history(org.core, `/v1/master-wallets/${wallet.id}`, '?limit=100')).totalCount).toBe(recorded.totalCount);
  });

  test('a deposit taken back by a reorg and recorded again in the same block (the chain went back to that fork) is credited again, and once', async () => {
    const { services, platform } = t.keel;
    const fresh = await createAddress(org, wallet.id, 'Fork walker');
    const [chainRow] = (await org.core.get('/v1/blockchains')).body.data;
    const usdc = (await org.core.get(`/v1/assets?blockchainId=${chainRow.id}&symbol=USDC`)).body.data[0];
    // The deposit as the watcher hands it to the ledger, in one block throughout.
    const deposit = { organizationId: org.orgId, addressId: fresh.id, masterWalletId: wallet.id, assetId: usdc.id, rawValue: '5000000', blockchainId: chainRow.id, txHash: ethers.hexlify(ethers.randomBytes(32)), logIndex: 0, blockHash: ethers.hexlify(ethers.randomBytes(32)), fromAddress: devChainAccount(3).address } as never;
    const available = async () => (await services.ledger.balance(platform.db, fresh.id, usdc.id, 'custody')).available;
    const step = (what: 'confirmed' | 'reverted') => platform.db.transaction((trx) => services.custodyLedgerSync[what](trx, [deposit]));

    await step('confirmed');
    expect(await available()).toBe(5_000_000n);
    await step('reverted');
    expect(await available()).toBe(0n);
    await step('confirmed');
    await step('confirmed'); // recorded again in the same block: counted once
    expect(await available()).toBe(5_000_000n);
    await step('reverted');
    await step('reverted');
    expect(await available()).toBe(0n);
  });
});
