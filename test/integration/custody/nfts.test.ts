import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ethers } from 'ethers';
import { shippedSanctionsDirectory } from '../../../src/modules/aml/sanctions-files';
import { anotherAdmin, TestOrg } from '../../support/keel';
import { useTestKeel } from '../../support/use-test-keel';
import { eventually } from '../../support/eventually';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { TEST_NFT_DEPLOYER_INDEX } from '../../../src/platform/chain/test-nfts';
import { mine, revert, snapshot } from '../../support/chain-controls';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { fundFromFaucet } from '../../../src/platform/chain/faucet';
import { WebhookReceiver } from '../../support/webhook-receiver';
import { keelCommand } from '../../support/keel-cli';

const FAST = { RATE_LIMIT_SCALE: 100, CHAIN_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 100, WEBHOOKS_ALLOW_PRIVATE_URLS: true, OUTBOX_POLL_INTERVAL_MS: 20 };
const erc1155 = new ethers.Interface([
  'function mintBatch(address to, uint256[] ids, uint256[] amounts)',
  'function safeBatchTransferFrom(address from, address to, uint256[] ids, uint256[] values, bytes data)',
  'function balanceOf(address owner, uint256 id) view returns (uint256)',
]);
const erc721 = new ethers.Interface(['function ownerOf(uint256 tokenId) view returns (address)']);

interface Asset {
  id: string;
  symbol: string;
  address: string;
  standard: string;
  decimals: number;
}

const recipient = () => ethers.Wallet.createRandom().address;
const SANCTIONED = readFileSync(path.join(shippedSanctionsDirectory(), 'sanctioned_addresses_ETH.txt'), 'utf8').split('\n').map((l) => l.trim()).filter(Boolean)[0];

describe('NFTs on the shared dev chains', () => {
  const { t } = useTestKeel(FAST);
  let org: TestOrg;
  let other: TestOrg;
  let chainA: string;
  let assets: Record<string, Asset>;
  let provider: ethers.JsonRpcProvider;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    org = await t.createOrg();
    other = await t.createOrg();
    const hook = await org.core.request('POST', '/v1/webhooks', { body: { url: await receiver.start(), name: 'deposits', eventTypes: ['DEPOSITE_INCOMING_DETECTED'] } });
    expect(hook.status).toBe(201);
    chainA = (await org.core.request('GET', '/v1/blockchains')).body.data[0].id;
    const res = await org.core.request('GET', `/v1/assets?blockchainId=${chainA}&limit=100`);
    assets = Object.fromEntries(res.body.data.map((a: Asset) => [a.symbol, a]));
    provider = t.keel.services.networks.get(chainA)!.provider;
  });
  afterAll(() => receiver.stop());

  const createWallet = async (configurations?: object) => {
    const res = await org.core.request('POST', '/v1/master-wallets', { body: { blockchainId: chainA, name: 'Vault', configurations } });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; walletAddress: string };
  };
  const createAddress = async (walletId: string) => {
    const res = await org.core.request('POST', `/v1/master-wallets/${walletId}/addresses`, { body: { name: 'Collector' } });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; address: string };
  };
  const faucet = async (body: object) => {
    const res = await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: chainA, ...body } });
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const history = async (path: string, query = '') => {
    const res = await org.core.request('GET', `${path}/transactions${query}`);
    expect(res.status).toBe(200);
    return res.body as { transfer: any[]; totalCount: number };
  };
  const incomingEvents = async (type: string, to: string) =>
    (await t.keel.platform.db('outbox_events').where({ type }).orderBy('sequence')).map((r) => r.envelope.data).filter((d) => d.to === to);
  const graphql = async (query: string, variables: object) => (await org.core.request('POST', '/graphql', { body: { query, variables } })).body;
  const settled = (transferId: string) =>
    eventually(async () => {
      const res = await org.core.request('GET', `/v1/transfers/${transferId}`);
      return ['CONFIRMED', 'FAILED', 'REJECTED'].includes(res.body.data.status) && res.body.data;
    }, 30_000, 200);

  test('the dev chains carry a test ERC-721 and ERC-1155 collection, registered as assets with decimals 0', () => {
    expect(assets.KNFT).toMatchObject({ standard: 'ERC721', decimals: 0 });
    expect(assets.KITEM).toMatchObject({ standard: 'ERC1155', decimals: 0 });
  });

  test('an ERC-721 mint and an ERC-1155 batch transfer to a deposit address are recorded as erc721 / erc1155 with token ids and amounts, announced once each', async () => {
    const wallet = await createWallet();
    const address = await createAddress(wallet.id);

    const minted = await faucet({ address: address.address, asset: 'KNFT', amount: '1' });
    expect(minted).toMatchObject({ symbol: 'KNFT', amount: '1', to: address.address, tokenId: expect.stringMatching(/^[1-9][0-9]*$/) });

    // A holder outside Keel mints three ids and sends them to the address in one TransferBatch.
    const holder = new ethers.Wallet(devChainAccount(TEST_NFT_DEPLOYER_INDEX).privateKey, provider);
    const ids = [7001n, 7002n, 7003n];
    const amounts = [5n, 1n, 12n];
    const items = new ethers.Contract(assets.KITEM.address, erc1155, holder);
    await (await items.mintBatch(holder.address, ids, amounts)).wait();
    const batch = await (await items.safeBatchTransferFrom(holder.address, address.address, ids, amounts, '0x')).wait();

    const all = await eventually(async () => {
      const h = await history(`/v1/addresses/${address.id}`, '?sort=ASC');
      return h.totalCount === 4 && h;
    }, 30_000);
    // Within one block the history's order is by record id: the batch is put in token order here.
    const nft = all.transfer.find((r) => r.category === 'erc721');
    const batched = all.transfer.filter((r) => r.category === 'erc1155').sort((a, b) => Number(a.tokenId) - Number(b.tokenId));
    expect(nft).toMatchObject({ category: 'erc721', direction: 'incoming', hash: minted.txHash, from: ethers.ZeroAddress, to: address.address, symbol: 'KNFT', tokenId: minted.tokenId, value: 1, rawContract: { value: '1', decimal: '0', address: assets.KNFT.address } });
    expect(batched.map((r) => [r.category, r.hash, r.tokenId, r.rawContract.value])).toEqual(ids.map((id, i) => ['erc1155', batch.hash, String(id), String(amounts[i])]));
    expect(new Set(batched.map((r) => r.logIndex)).size).toBe(1);

    // History filtered by category, on REST and GraphQL alike.
    expect((await history(`/v1/addresses/${address.id}`, '?category=erc721')).transfer.map((r) => r.id)).toEqual([nft.id]);
    expect((await history(`/v1/master-wallets/${wallet.id}`, '?category=erc1155')).totalCount).toBe(3);
    expect((await history(`/v1/addresses/${address.id}`, '?category=erc20')).totalCount).toBe(0);
    const gql = await graphql(`query($id: ID!) { addressTransactions(id: $id, category: "erc1155", sort: "ASC") { totalCount transfer { tokenId category } } }`, { id: address.id });
    expect(gql.errors).toBeUndefined();
    expect(gql.data.addressTransactions.transfer.map((r: { tokenId: string }) => r.tokenId).sort()).toEqual(ids.map(String));

    // One address.incoming_transfer per record, NFT-shaped, none twice; nothing was credited to the custody ledger.
    const events = await eventually(async () => {
      const e = await incomingEvents('address.incoming_transfer', address.address);
      return e.length >= 4 && e;
    });
    expect(events.map((e) => e.id).sort()).toEqual(all.transfer.map((r) => r.id).sort());
    expect(events.find((e) => e.id === nft.id)).toMatchObject({ category: 'erc721', value: '1', asset: { id: assets.KNFT.id, symbol: 'KNFT', decimals: 0 }, nft: { tokenId: minted.tokenId, amount: '1', standard: 'ERC721', batchIndex: 0 } });
    expect(events.filter((e) => e.category === 'erc1155').map((e) => e.nft).sort((a, b) => a.batchIndex - b.batchIndex)).toEqual(ids.map((id, i) => ({ tokenId: String(id), amount: String(amounts[i]), standard: 'ERC1155', batchIndex: i })));
    expect(await t.keel.platform.db('ledger_entries').where({ walletId: address.id }).whereIn('assetId', [assets.KNFT.id, assets.KITEM.id])).toHaveLength(0);

    // Delivered to the organisation's webhook: each record once, with its NFT data.
    const delivered = await eventually(async () => {
      const d = receiver.requests.map((r) => JSON.parse(r.body)).filter((e) => e.data.to === address.address);
      return d.length >= 4 && d;
    });
    expect(delivered.map((e) => [e.type, e.data.id]).sort()).toEqual(events.map((e) => ['address.incoming_transfer', e.id]).sort());
    expect(delivered.find((e) => e.data.id === batched[1].id).data.nft).toEqual({ tokenId: '7002', amount: '1', standard: 'ERC1155', batchIndex: 1 });

    // Scanning the same blocks again records nothing new (the event key includes the batch position).
    const before = await t.keel.platform.db('chain_transfers').where({ addressId: address.id }).count('* as n').first();
    await t.keel.platform.db('chain_cursors').where({ blockchainId: chainA }).update({ blockNumber: Number(nft.blockNum) - 1, blockHash: (await provider.getBlock(Number(nft.blockNum) - 1))!.hash });
    await eventually(async () => Number((await t.keel.platform.db('chain_cursors').where({ blockchainId: chainA }).first()).blockNumber) > Number(batched[0].blockNum), 30_000);
    expect(await t.keel.platform.db('chain_transfers').where({ addressId: address.id }).count('* as n').first()).toEqual(before);
    expect(await incomingEvents('address.incoming_transfer', address.address)).toHaveLength(4);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.requests.map((r) => JSON.parse(r.body)).filter((e) => e.data.to === address.address)).toHaveLength(4);

    // Balances list what the address holds, read from the chain.
    const held = await org.core.request('GET', `/v1/addresses/${address.id}/nfts`);
    expect(held.status).toBe(200);
    const bySymbolAndId = (rows: string[][]) => rows.sort((a, b) => `${a[0]}:${a[2].padStart(20, '0')}`.localeCompare(`${b[0]}:${b[2].padStart(20, '0')}`));
    expect(bySymbolAndId(held.body.data.map((h: any) => [h.asset.symbol, h.standard, h.tokenId, h.amount]))).toEqual(
      bySymbolAndId([...ids.map((id, i) => ['KITEM', 'ERC1155', String(id), String(amounts[i])]), ['KNFT', 'ERC721', minted.tokenId, '1']]),
    );
    expect((await graphql(`query($id: ID!) { addressNfts(id: $id) { tokenId amount standard } }`, { id: address.id })).data.addressNfts).toHaveLength(4);
    expect((await org.core.request('GET', `/v1/master-wallets/${wallet.id}/nfts`)).body.data).toEqual([]);

    // Another organisation sees none of it.
    expect((await other.core.request('GET', `/v1/addresses/${address.id}/nfts`)).status).toBe(404);
    expect((await other.core.request('GET', `/v1/master-wallets/${wallet.id}/nfts`)).status).toBe(404);
    expect((await other.core.request('GET', `/v1/addresses/${address.id}/transactions?category=erc721`)).status).toBe(404);
  });

  test('an NFT is sent out with safeTransferFrom under the wallet policy: refused to a stranger, held for approval, then confirmed and gone from the balances', async () => {
    const allowed = recipient();
    const wallet = await createWallet({ security: { allowedRecipients: [allowed], requireApprovalForTransfers: true } });
    await faucet({ address: wallet.walletAddress, amount: '1' });
    const minted = await faucet({ address: wallet.walletAddress, asset: 'KNFT', amount: '1' });
    await faucet({ address: wallet.walletAddress, asset: 'KITEM', amount: '10', tokenId: '9001' });
    const send = (line: object, key?: string) =>
      org.core.request('POST', `/v1/master-wallets/${wallet.id}/transfer`, { body: { assets: [line] }, ...(key ? { headers: { 'Idempotency-Key': key } } : {}) });

    const stranger = await send({ assetId: assets.KNFT.id, recipient: recipient(), amount: '1', tokenId: minted.tokenId });
    expect(stranger.status).toBe(403);
    expect(stranger.body.error.message).toMatch(/allowedRecipients/);
    const sanctioned = await send({ assetId: assets.KNFT.id, recipient: SANCTIONED, amount: '1', tokenId: minted.tokenId });
    expect([sanctioned.status, sanctioned.body.error.code]).toEqual([403, 'SANCTIONED_ADDRESS']);

    const key = `nft-${Date.now()}`;
    const held = await send({ assetId: assets.KNFT.id, recipient: allowed, amount: '1', tokenId: minted.tokenId }, key);
    expect(held.status).toBe(201);
    expect(held.body.data).toMatchObject({ status: 'PENDING_APPROVAL', items: [{ tokenId: minted.tokenId, amount: '1', asset: { symbol: 'KNFT' } }] });
    // The same key answers the same transfer; the token already on its way out cannot be queued twice.
    expect((await send({ assetId: assets.KNFT.id, recipient: allowed, amount: '1', tokenId: minted.tokenId }, key)).body.data.id).toBe(held.body.data.id);
    const twice = await send({ assetId: assets.KNFT.id, recipient: allowed, amount: '1', tokenId: minted.tokenId });
    expect(twice.status).toBe(400);
    expect(twice.body.error).toMatchObject({ code: 'INSUFFICIENT_FUNDS', details: { tokenId: minted.tokenId, available: '1', required: '2' } });
    const tooMany = await send({ assetId: assets.KITEM.id, recipient: allowed, amount: '11', tokenId: '9001' });
    expect(tooMany.body.error).toMatchObject({ code: 'INSUFFICIENT_FUNDS', details: { available: '10', required: '11' } });

    // Requests for one ERC-721 at once: one is recorded, the others see it in flight.
    const second = await faucet({ address: wallet.walletAddress, asset: 'KNFT', amount: '1' });
    const racing = await Promise.all(Array.from({ length: 4 }, () => send({ assetId: assets.KNFT.id, recipient: allowed, amount: '1', tokenId: second.tokenId })));
    expect(racing.map((r) => r.status).sort()).toEqual([201, 400, 400, 400]);
    expect(racing.filter((r) => r.status === 400).every((r) => r.body.error.code === 'INSUFFICIENT_FUNDS')).toBe(true);
    const raced = racing.find((r) => r.status === 201)!;
    expect((await org.core.request('POST', `/v1/transfers/${raced.body.data.id}/reject`)).body.data.status).toBe('REJECTED');

    const approver = (await anotherAdmin(org)).core;
    expect((await approver.request('POST', `/v1/transfers/${held.body.data.id}/approve`)).body.data.status).toBe('QUEUED');
    const done = await settled(held.body.data.id);
    expect(done.status).toBe('CONFIRMED');
    expect(erc721.decodeFunctionResult('ownerOf', await provider.call({ to: assets.KNFT.address, data: erc721.encodeFunctionData('ownerOf', [minted.tokenId]) }))[0]).toBe(allowed);
    const events = (await t.keel.platform.db('outbox_events').where({ type: 'master.transfer_executed' })).map((r) => r.envelope.data).filter((d) => d.transferId === done.id);
    expect(events).toHaveLength(1);

    const sent = await org.core.request('POST', `/v1/master-wallets/${wallet.id}/transfer`, { body: { assets: [{ assetId: assets.KITEM.id, recipient: allowed, amount: '4', tokenId: '9001' }] } });
    expect(sent.status).toBe(201);
    await approver.request('POST', `/v1/transfers/${sent.body.data.id}/approve`);
    expect((await settled(sent.body.data.id)).status).toBe('CONFIRMED');
    expect(erc1155.decodeFunctionResult('balanceOf', await provider.call({ to: assets.KITEM.address, data: erc1155.encodeFunctionData('balanceOf', [allowed, 9001n]) }))[0]).toBe(4n);

    // What is left: six of the ERC-1155 id, and the ERC-721 whose raced send was rejected; the one sent is gone.
    const balances = await eventually(async () => {
      const res = await org.core.request('GET', `/v1/master-wallets/${wallet.id}/nfts`);
      return res.body.data.length === 2 && res.body.data;
    });
    expect(balances.map((b: any) => [b.asset.symbol, b.standard, b.tokenId, b.amount]).sort()).toEqual([
      ['KITEM', 'ERC1155', '9001', '6'],
      ['KNFT', 'ERC721', second.tokenId, '1'],
    ]);
    const outgoing = await eventually(async () => {
      const h = await history(`/v1/master-wallets/${wallet.id}`, '?direction=outgoing&category=erc721');
      return h.totalCount === 1 && h;
    });
    expect(outgoing.transfer[0]).toMatchObject({ hash: done.items[0].txHash, tokenId: minted.tokenId, to: allowed });

    // Another organisation cannot send it.
    expect((await other.core.request('POST', `/v1/master-wallets/${wallet.id}/transfer`, { body: { assets: [{ assetId: assets.KITEM.id, recipient: allowed, amount: '1', tokenId: '9001' }] } })).status).toBe(404);
  });

  test('`keel dev fund` mints the test collections too, and the mint is a deposit like any other', async () => {
    const wallet = await createWallet();
    const minted = await keelCommand<{ txHash: string; tokenId: string; symbol: string; amount: string }>(t.config, ['dev', 'fund', '--address', wallet.walletAddress, '--asset', 'KITEM', '--amount', '3', '--token-id', '55']);
    expect(minted).toMatchObject({ symbol: 'KITEM', amount: '3', tokenId: '55' });
    const recorded = await eventually(async () => {
      const h = await history(`/v1/master-wallets/${wallet.id}`, '?category=erc1155');
      return h.totalCount === 1 && h.transfer[0];
    }, 30_000);
    expect(recorded).toMatchObject({ hash: minted.txHash, tokenId: '55', rawContract: { value: '3' }, addressId: null });
    expect((await incomingEvents('master.incoming_transfer', wallet.walletAddress)).map((e) => e.nft)).toEqual([{ tokenId: '55', amount: '3', standard: 'ERC1155', batchIndex: 0 }]);
  });

  test('bad NFT input gets the error envelope', async () => {
    const wallet = await createWallet();
    const send = (line: object) => org.core.request('POST', `/v1/master-wallets/${wallet.id}/transfer`, { body: { assets: [line] } });
    const cases: [object, string][] = [
      [{ assetId: assets.KNFT.id, recipient: recipient(), amount: '1' }, 'assets.0.tokenId'],
      [{ assetId: assets.KNFT.id, recipient: recipient(), amount: '2', tokenId: '1' }, 'assets.0.amount'],
      [{ assetId: assets.KITEM.id, recipient: recipient(), amount: '1.5', tokenId: '1' }, 'assets.0.amount'],
      [{ assetId: assets.KITEM.id, recipient: recipient(), amount: '1', tokenId: '-3' }, 'assets.0.tokenId'],
      [{ assetId: assets.KITEM.id, recipient: recipient(), amount: '1', tokenId: (2n ** 256n).toString() }, 'assets.0.tokenId'],
      [{ assetId: assets.USDC.id, recipient: recipient(), amount: '1', tokenId: '1' }, 'assets.0.tokenId'],
    ];
    for (const [line, field] of cases) {
      const res = await send(line);
      expect([res.status, res.body.error?.details?.fields?.[0]?.field]).toEqual([422, field]);
    }
    const category = await org.core.request('GET', `/v1/master-wallets/${wallet.id}/transactions?category=erc999`);
    expect(category.status).toBe(422);
    expect(category.body.error.details.fields[0].field).toBe('category');
    const noId = await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: chainA, address: wallet.walletAddress, asset: 'KITEM', amount: '1' } });
    expect([noId.status, noId.body.error.details.fields[0].field]).toEqual([422, 'tokenId']);
    const twoOf721 = await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: chainA, address: wallet.walletAddress, asset: 'KNFT', amount: '2' } });
    expect([twoOf721.status, twoOf721.body.error.details.fields[0].field]).toEqual([422, 'amount']);

    // What moves fungible value does not take a collection.
    const swap = await org.core.request('GET', `/v1/swaps/quote?fromAssetId=${assets.KNFT.id}&toAssetId=${assets.USDC.id}&amount=1`);
    expect([swap.status, swap.body.error.details.fields[0].field]).toEqual([422, 'fromAssetId']);
    const intent = await org.core.request('POST', '/v1/payment/intents', { body: { amount: '1', assetId: assets.KITEM.id, masterWalletId: wallet.id } });
    expect([intent.status, intent.body.error.details.fields[0].field]).toEqual([422, 'assetId']);
    expect((await org.core.request('GET', `/v1/master-wallets/${wallet.id}/balances`)).body.data.map((b: any) => b.asset.symbol)).not.toContain('KNFT');
  });
});

describe('NFT deposits on a chain of their own (reorgs)', () => {
  const CONFIRMATIONS = 2;
  let k: OwnChainKeel;

  beforeAll(async () => {
    k = await startKeelOnOwnChain(31_341, CONFIRMATIONS, { CHAIN_POLL_INTERVAL_MS: 100 });
  }, 60_000);
  afterAll(() => k?.stop());

  test('a reorg that drops an ERC-1155 batch marks every record of it REVERTED and reports each once; the chain going on counts nothing twice', async () => {
    const { t, org, chain, assets } = k;
    const wallet = (await org.core.request('POST', '/v1/master-wallets', { body: { blockchainId: k.blockchainId, name: 'Vault' } })).body.data;
    const address = (await org.core.request('POST', `/v1/master-wallets/${wallet.id}/addresses`, { body: { name: 'Collector' } })).body.data;
    const records = async (status: string) => (await org.core.request('GET', `/v1/addresses/${address.id}/transactions?status=${status}&category=erc1155`)).body.transfer as any[];

    const before = await snapshot(chain.rpcUrl);
    const res = await org.core.request('POST', '/v1/dev/faucet', { body: { address: address.address, asset: 'KITEM', amount: '3', tokenId: '42' } });
    expect(res.status).toBe(200);
    const holder = new ethers.Wallet(devChainAccount(TEST_NFT_DEPLOYER_INDEX).privateKey, new ethers.JsonRpcProvider(chain.rpcUrl, undefined, { cacheTimeout: -1 }));
    const items = new ethers.Contract(assets.KITEM.address, erc1155, holder);
    await (await items.mintBatch(holder.address, [1n, 2n], [4n, 6n])).wait();
    const batch = await (await items.safeBatchTransferFrom(holder.address, address.address, [1n, 2n], [4n, 6n], '0x')).wait();
    await mine(chain.rpcUrl, CONFIRMATIONS);
    await eventually(async () => (await records('CONFIRMED')).length === 3);

    await revert(chain.rpcUrl, before);
    await fundFromFaucet(chain.rpcUrl, devChainAccount(0).privateKey, { to: devChainAccount(7).address, amount: '1' });
    await mine(chain.rpcUrl, CONFIRMATIONS + 4);
    const reverted = await eventually(async () => {
      const r = await records('REVERTED');
      return r.length === 3 && r;
    });
    expect(reverted.map((r) => r.tokenId).sort()).toEqual(['1', '2', '42']);
    expect(await records('CONFIRMED')).toHaveLength(0);
    const reports = (await t.keel.platform.db('outbox_events').where({ type: 'address.incoming_transfer_reverted' })).map((r) => r.envelope.data).filter((d) => d.to === address.address);
    expect(reports.map((d) => d.id).sort()).toEqual(reverted.map((r) => r.id).sort());
    expect(reports.filter((d) => d.hash === batch!.hash).map((d) => d.nft.tokenId).sort()).toEqual(['1', '2']);
    // Nothing is held any more, and nothing reached the ledger to be taken back.
    expect((await org.core.request('GET', `/v1/addresses/${address.id}/nfts`)).body.data).toEqual([]);
    expect(await t.keel.platform.db('ledger_entries').where({ walletId: address.id })).toHaveLength(0);

    await mine(chain.rpcUrl, 3);
    await new Promise((r) => setTimeout(r, 600));
    expect((await org.core.request('GET', `/v1/addresses/${address.id}/transactions`)).body.totalCount).toBe(3);
  });
});
