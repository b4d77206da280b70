import { randomUUID } from 'node:crypto';
import { ethers } from 'ethers';
import { DexQuoter } from '../../../src/modules/swaps/dex-quoter';
import { txHashesSentAs } from '../../../src/modules/withdrawals/transfer-item-rows';
import { useTestKeel } from '../../support/use-test-keel';
import { anotherAdmin } from '../../support/keel';
import type { ApiClient } from '../../support/api-client';
import { eventually } from '../../support/eventually';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { WalletDebts } from '../../../src/modules/ledger/wallet-debts';
import { Asset, assetsOf, balanceReader, createWallet, FAST, fund, randomAddress } from './support';

describe("swaps on the dev chain's Uniswap V2", () => {
  let chain: string;
  let assets: Record<string, Asset>;
  let provider: ethers.JsonRpcProvider;
  let balanceOf: (symbol: string, owner: string) => Promise<bigint>;
  /** Approves held swaps: not the key that asked for them (org.core). */
  let approver: ApiClient;

  const { t, orgs: [org, other] } = useTestKeel(FAST, { orgs: 2 });
  beforeAll(async () => {
    approver = (await anotherAdmin(org)).core;
    chain = (await org.core.request('GET', '/v1/blockchains')).body.data[0].id;
    assets = await assetsOf(org, chain);
    provider = t.keel.services.networks.get(chain)!.provider;
    balanceOf = balanceReader(provider, assets);
  });

  const swapDone = (id: string, client = org) =>
    eventually(async () => {
      const res = await client.core.request('GET', `/v1/swaps/${id}`);
      return ['EXECUTED', 'FAILED', 'REJECTED'].includes(res.body.data.status) && res.body.data;
    }, 45_000);

  test('a quote names the route, expected and minimum output, price impact, pool fee and gas; the minimum follows the slippage tolerance', async () => {
    const res = await org.core.request('GET', `/v1/swaps/quote?fromAssetId=${assets.USDC.id}&toAssetId=${assets.DAI.id}&amount=1000&slippageTolerance=1`);
    expect(res.status).toBe(200);
    const q = res.body.data;
    expect(q.route.map((s: { symbol: string }) => s.symbol)).toEqual(['USDC', 'DAI']);
    // 1,000 USDC into a 10M/10M pool: just under 997 DAI after the 0.3% fee and the trade's own impact.
    expect(Number(q.expectedOutput)).toBeGreaterThan(996);
    expect(Number(q.expectedOutput)).toBeLessThan(997);
    expect(Number(q.minimumOutput)).toBeCloseTo(Number(q.expectedOutput) * 0.99, 6);
    expect(Number(q.priceImpact)).toBeGreaterThan(0);
    expect(Number(q.priceImpact)).toBeLessThan(0.1);
    expect(q.fee).toMatchObject({ amount: '3', percent: '0.3', asset: { id: assets.USDC.id } });
    expect(Number(q.gas.limit)).toBeGreaterThan(0);
    expect(q.gas.approvalLimit).not.toBe('0');

    const eth = (await org.core.request('GET', `/v1/swaps/quote?fromAssetId=${assets.ETH.id}&toAssetId=${assets.DAI.id}&amount=1&order=NO_SLIPPAGE`)).body.data;
    expect(eth.minimumOutput).toBe(eth.expectedOutput);
    expect(eth.gas.approvalLimit).toBe('0');

    // The same through GraphQL.
    const gql = await org.core.request('POST', '/graphql', { body: { query: `{ swapQuote(fromAssetId: "${assets.ETH.id}", toAssetId: "${assets.USDC.id}", amount: "2", order: "CHEAPEST") { expectedOutput minimumOutput order route { symbol } } }` } });
    expect(gql.body.data.swapQuote).toMatchObject({ order: 'CHEAPEST', route: [{ symbol: 'ETH' }, { symbol: 'USDC' }] });
    expect(Number(gql.body.data.swapQuote.expectedOutput)).toBeGreaterThan(3900);

    const bad = await org.core.request('GET', `/v1/swaps/quote?fromAssetId=${assets.USDC.id}&toAssetId=${assets.USDC.id}&amount=1`);
    expect(bad.status).toBe(422);
    const badOrder = await org.core.request('GET', `/v1/swaps/quote?fromAssetId=${assets.USDC.id}&toAssetId=${assets.DAI.id}&amount=1&order=SOONEST`);
    expect(badOrder.status).toBe(422);
    expect(badOrder.body.error.details.fields[0].field).toBe('order');
  });

  test('a token swap from a master wallet approves the router, then swaps; the recipient gets at least the minimum and master.swap_executed reports it', async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    await fund(t, org, chain, wallet.walletAddress, '500', 'USDC');
    const recipient = randomAddress();
    const res = await org.core.request('POST', '/v1/swaps', { body: { masterWalletId: wallet.id, fromAssetId: assets.USDC.id, toAssetId: assets.DAI.id, amount: '250', recipient, slippageTolerance: '0.5' } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'QUEUED', amount: '250', recipient, route: ['USDC', 'DAI'], order: 'RECOMMENDED', slippageTolerance: '0.5' });
    const done = await swapDone(res.body.data.id);
    expect(done.status).toBe('EXECUTED');
    const received = await balanceOf('DAI', recipient);
    expect(ethers.formatUnits(received, 18).replace(/\.0$/, '')).toBe(done.outputAmount);
    expect(received).toBeGreaterThanOrEqual(ethers.parseUnits(done.minimumOutput, 18));
    expect(await balanceOf('USDC', wallet.walletAddress)).toBe(ethers.parseUnits('250', 6));
    const transfer = (await org.core.request('GET', `/v1/transfers/${done.transferId}`)).body.data;
    expect(transfer.kind).toBe('swap');
    expect(transfer.items.map((i: { status: string }) => i.status)).toEqual(['CONFIRMED', 'CONFIRMED']);
    // Keel knows the swap's transaction as its own: its output is no deposit for a settlement rule to act on.
    expect(await txHashesSentAs(t.keel.platform.db, 'swap', [done.txHash, randomAddress()])).toEqual(new Set([done.txHash]));

    const event = await eventually(async () => (await t.keel.platform.db('outbox_events').where({ type: 'master.swap_executed' }).whereRaw(`envelope->'data'->>'swapId' = ?`, [done.id]).first()) ?? false);
    const data = event.envelope.data;
    expect(data).toMatchObject({
      status: 'EXECUTED',
      txhash: done.txHash,
      srcWalet: { id: wallet.id, name: 'Treasury', walletAddress: wallet.walletAddress },
      dstAddress: recipient,
      srcAsset: { id: assets.USDC.id, symbol: 'USDC', decimals: 6 },
      dstAsset: { id: assets.DAI.id, symbol: 'DAI', decimals: 18 },
      inputAmount: 250,
      outputAmount: Number(done.outputAmount),
      minOutputAmount: Number(done.minimumOutput),
      blockchain: { id: chain },
    });
    expect(Number(data.gasFee)).toBeGreaterThan(0);
  });

  test('a token-to-native swap back into the wallet: the router pays the coin internally, and the custody ledger still equals the chain', async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    await fund(t, org, chain, wallet.walletAddress, '300', 'USDC');
    const res = await org.core.request('POST', '/v1/swaps', { body: { masterWalletId: wallet.id, fromAssetId: assets.USDC.id, toAssetId: assets.ETH.id, amount: '300', order: 'FASTEST' } });
    expect(res.status).toBe(201);
    const done = await swapDone(res.body.data.id);
    expect(done).toMatchObject({ status: 'EXECUTED', recipient: wallet.walletAddress, route: ['USDC', 'ETH'] });
    expect(Number(done.outputAmount)).toBeGreaterThan(0.14);
    const { db } = t.keel.platform;
    const ledger = await eventually(async () => {
      const b = await t.keel.services.ledger.balance(db, wallet.id, assets.ETH.id, 'custody');
      // Both lines (approval and swap) have paid their gas once the transfer is final.
      const transfer = (await org.core.request('GET', `/v1/transfers/${done.transferId}`)).body.data;
      return transfer.status === 'CONFIRMED' && b;
    });
    expect(ledger.available).toBe(await balanceOf('ETH', wallet.walletAddress));
    expect((await t.keel.services.ledger.balance(db, wallet.id, assets.USDC.id, 'custody')).available).toBe(0n);
    // FASTEST approved the router for exactly this swap, which spent it all: no standing allowance is left.
    const network = t.keel.services.networks.get(chain)!;
    expect(await new DexQuoter().allowance(network, assets.USDC.address, wallet.walletAddress)).toBe(0n);
    // And the published API description of the orders says so.
    const described = await org.core.request('POST', '/graphql', { body: { query: '{ __type(name: "SwapInput") { inputFields { name description } } }' } });
    const order = described.body.data.__type.inputFields.find((f: { name: string }) => f.name === 'order').description as string;
    expect(order).toMatch(/FASTEST[^.]*: the RECOMMENDED route\./);
    expect(order).toContain('never an unlimited allowance');
    expect(order).not.toMatch(/FASTEST[^.]*for an unlimited allowance/);
  });

  test("a swap's output into a wallet that owes the output asset repays the debt first, as a deposit does: the native coin the router pays internally, and a token", async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    await fund(t, org, chain, wallet.walletAddress, '300', 'USDC');
    const { db, outbox, metrics } = t.keel.platform;
    // What a reorg leaves when it takes back a deposit already spent: a debt of the custody account in the asset.
    const debts = new WalletDebts(t.keel.services.ledger, outbox, metrics);
    const owe = (symbol: string, amount: bigint) => db.transaction((trx) => debts.record(trx, { organizationId: org.orgId, walletId: wallet.id, assetId: assets[symbol].id, account: 'custody', amount, reference: `test-debt:${randomUUID()}` }));
    const owedEth = ethers.parseEther('0.05');
    const owedDai = ethers.parseUnits('5', 18);
    await owe('ETH', owedEth);
    await owe('DAI', owedDai);
    const repayments = async () =>
      (await db('outbox_events').where({ organizationId: org.orgId, type: 'wallet.debt_repaid' }).whereRaw(`envelope->'data'->>'walletId' = ?`, [wallet.id])).map((r) => (typeof r.envelope === 'string' ? JSON.parse(r.envelope) : r.envelope).data);

    const swapInto = async (to: string, amount: string) => {
      const res = await org.core.request('POST', '/v1/swaps', { body: { masterWalletId: wallet.id, fromAssetId: assets.USDC.id, toAssetId: assets[to].id, amount } });
      expect(res.status).toBe(201);
      const done = await swapDone(res.body.data.id);
      expect(done).toMatchObject({ status: 'EXECUTED', recipient: wallet.walletAddress });
      return done;
    };
    const eth = await swapInto('ETH', '200');
    await swapInto('DAI', '100');
    // The token's output is a deposit the watcher records after the swap: repaid once it is confirmed.
    const repaid = await eventually(async () => {
      const list = await repayments();
      return list.length === 2 && list;
    }, 30_000);
    expect(repaid).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ assetId: assets.ETH.id, account: 'custody', amount: owedEth.toString(), outstanding: '0', reference: `swap-output:${eth.id}` }),
        expect.objectContaining({ assetId: assets.DAI.id, account: 'custody', amount: owedDai.toString(), outstanding: '0', reference: expect.stringMatching(/^deposit:/) }),
      ]),
    );
    expect((await db('wallet_debts').where({ walletId: wallet.id, account: 'custody' })).map((d) => d.amount)).toEqual(['0', '0']);
  });

  test('four swaps of one token from one wallet sent at once each find the router approved for all of them, and all execute', async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    await fund(t, org, chain, wallet.walletAddress, '400', 'USDC');
    const sent = await Promise.all([1, 2, 3, 4].map(() => org.core.request('POST', '/v1/swaps', { body: { masterWalletId: wallet.id, fromAssetId: assets.USDC.id, toAssetId: assets.DAI.id, amount: '100' } })));
    expect(sent.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    const done = await Promise.all(sent.map((r) => swapDone(r.body.data.id)));
    expect(done.map((d) => [d.status, d.error ?? null])).toEqual(Array(4).fill(['EXECUTED', null]));
    expect(await balanceOf('USDC', wallet.walletAddress)).toBe(0n);
    // Each approval covered the swaps on their way when it was queued; what is left approved is at
    // most the earlier swaps that were mined before a later approval (the next swap uses it).
    expect(await new DexQuoter().allowance(t.keel.services.networks.get(chain)!, assets.USDC.address, wallet.walletAddress)).toBeLessThanOrEqual(ethers.parseUnits('300', 6));
  });

  test("lines are sent in the order they were queued: a transaction that began first but queued after another (as a swap waiting on another's approval decision does) comes second", async () => {
    const wallet = await createWallet(org, chain);
    const { db } = t.keel.platform;
    const sending = await t.keel.services.sendingWallets.resolve(org.orgId, { masterWalletId: wallet.id });
    const usdc = (await t.keel.services.chains.assetViews([assets.USDC.id])).get(assets.USDC.id)!;
    const queue = (trx: Parameters<typeof t.keel.services.transfers.enqueue>[0]) => t.keel.services.transfers.enqueue(trx, sending, chain, 'withdrawal', [{ asset: usdc, recipient: randomAddress(), rawAmount: 0n }]);
    const createdAt = async (trx: Parameters<typeof queue>[0], itemId: string) => (await trx('transfer_items').where({ id: itemId }).first('createdAt')).createdAt as Date;
    const first = await db.transaction();
    const second = await db.transaction();
    try {
      await first.raw('SELECT 1'); // begins first
      await new Promise((r) => setTimeout(r, 20));
      const queuedFirst = await queue(second);
      const queuedSecond = await queue(first);
      expect((await createdAt(first, queuedSecond.itemIds[0])).getTime()).toBeGreaterThan((await createdAt(second, queuedFirst.itemIds[0])).getTime());
    } finally {
      await Promise.all([first.rollback(), second.rollback()]);
    }
  });

  test('a pool moved against the quote makes the swap fail before anything is swapped: the wallet keeps its tokens, the recipient gets nothing, master.swap_failed reports it', async () => {
    // Chain B: moving its USDC/DAI pool cannot disturb the quotes other tests read on chain A.
    const chainB = (await org.core.request('GET', '/v1/blockchains')).body.data[1].id;
    const assetsB = await assetsOf(org, chainB);
    const providerB = t.keel.services.networks.get(chainB)!.provider;
    const balanceB = balanceReader(providerB, assetsB);
    // Held for approval: the quote's minimum is fixed now, the swap is signed only after the pool moves.
    const wallet = await createWallet(org, chainB, { security: { requireApprovalForTransfers: true } });
    await fund(t, org, chainB, wallet.walletAddress, '1');
    await fund(t, org, chainB, wallet.walletAddress, '100', 'USDC');
    const recipient = randomAddress();
    const res = await org.core.request('POST', '/v1/swaps', { body: { masterWalletId: wallet.id, fromAssetId: assetsB.USDC.id, toAssetId: assetsB.DAI.id, amount: '100', recipient, order: 'NO_SLIPPAGE' } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'PENDING_APPROVAL', slippageTolerance: '0' });
    expect(res.body.data.minimumOutput).toBe(res.body.data.expectedOutput);

    // Someone else sells USDC for DAI in the same pool: DAI per USDC falls.
    const mover = devChainAccount(7);
    await fund(t, org, chainB, mover.address, '1', undefined, false);
    await fund(t, org, chainB, mover.address, '500000', 'USDC', false);
    const signer = new ethers.Wallet(mover.privateKey, providerB);
    const router = new ethers.Contract(t.keel.services.networks.get(chainB)!.spec.dex!.router, ['function swapExactTokensForTokens(uint, uint, address[], address, uint) returns (uint[])'], signer);
    const usdc = new ethers.Contract(assetsB.USDC.address, ['function approve(address, uint256) returns (bool)', 'function balanceOf(address) view returns (uint256)'], signer);
    await eventually(async () => (await usdc.balanceOf(mover.address)) > 0n, 30_000);
    await (await usdc.approve(await router.getAddress(), ethers.MaxUint256)).wait();
    await (await router.swapExactTokensForTokens(ethers.parseUnits('500000', 6), 0, [assetsB.USDC.address, assetsB.DAI.address], mover.address, Math.floor(Date.now() / 1000) + 600)).wait();

    // Four eyes: the key that asked for the swap cannot release it.
    expect((await org.core.request('POST', `/v1/transfers/${res.body.data.transferId}/approve`)).status).toBe(403);
    expect((await approver.request('POST', `/v1/transfers/${res.body.data.transferId}/approve`)).status).toBe(200);
    const done = await swapDone(res.body.data.id);
    expect(done.status).toBe('FAILED');
    expect(done.error).toMatch(/INSUFFICIENT_OUTPUT_AMOUNT/);
    expect(done.outputAmount).toBeNull();
    expect(await balanceB('USDC', wallet.walletAddress)).toBe(ethers.parseUnits('100', 6));
    expect(await balanceB('DAI', recipient)).toBe(0n);
    const failed = await eventually(async () => (await t.keel.platform.db('outbox_events').where({ type: 'master.swap_failed' }).whereRaw(`envelope->'data'->>'swapId' = ?`, [done.id]).first()) ?? false);
    expect(failed.envelope.data).toMatchObject({ status: 'FAILED', srcWalet: { id: wallet.id }, dstAddress: recipient, inputAmount: 100, outputAmount: 0, minOutputAmount: Number(done.minimumOutput) });
  });

  test('a pool moved in the swap\'s favour while it is held raises its minimum output at approval to the new price less its slippage', async () => {
    const chainB = (await org.core.request('GET', '/v1/blockchains')).body.data[1].id;
    const assetsB = await assetsOf(org, chainB);
    const providerB = t.keel.services.networks.get(chainB)!.provider;
    const wallet = await createWallet(org, chainB, { security: { requireApprovalForTransfers: true } });
    await fund(t, org, chainB, wallet.walletAddress, '1');
    await fund(t, org, chainB, wallet.walletAddress, '100', 'USDC');
    const res = await org.core.request('POST', '/v1/swaps', { body: { masterWalletId: wallet.id, fromAssetId: assetsB.USDC.id, toAssetId: assetsB.DAI.id, amount: '100', slippageTolerance: '1' } });
    expect(res.body.data).toMatchObject({ status: 'PENDING_APPROVAL', slippageTolerance: '1' });

    // Someone sells DAI for USDC along the swap's own route: USDC now buys more DAI than when the swap was quoted.
    const swapRow = await t.keel.platform.db('swaps').where({ id: res.body.data.id }).first();
    const call = new ethers.Interface(['function swapExactTokensForTokens(uint amountIn, uint amountOutMin, address[] path, address to, uint deadline)']).parseTransaction({ data: (await t.keel.platform.db('transfer_items').where({ id: swapRow.swapItemId }).first()).callData })!;
    const path = [...(call.args.path as string[])];
    const mover = devChainAccount(8);
    await fund(t, org, chainB, mover.address, '1', undefined, false);
    await fund(t, org, chainB, mover.address, '200000', 'DAI', false);
    const signer = new ethers.Wallet(mover.privateKey, providerB);
    const routerAddress = t.keel.services.networks.get(chainB)!.spec.dex!.router;
    const router = new ethers.Contract(routerAddress, ['function swapExactTokensForTokens(uint, uint, address[], address, uint) returns (uint[])', 'function getAmountsOut(uint, address[]) view returns (uint[])'], signer);
    const dai = new ethers.Contract(assetsB.DAI.address, ['function approve(address, uint256) returns (bool)', 'function balanceOf(address) view returns (uint256)'], signer);
    await eventually(async () => (await dai.balanceOf(mover.address)) > 0n, 30_000);
    await (await dai.approve(routerAddress, ethers.MaxUint256)).wait();
    await (await router.swapExactTokensForTokens(ethers.parseUnits('200000', 18), 0, [...path].reverse(), mover.address, Math.floor(Date.now() / 1000) + 600)).wait();
    const amounts: bigint[] = await router.getAmountsOut(ethers.parseUnits('100', 6), path);
    const raisedFloor = (amounts[amounts.length - 1] * 9_900n) / 10_000n;
    expect(raisedFloor).toBeGreaterThan(ethers.parseUnits(res.body.data.minimumOutput, 18));

    expect((await approver.request('POST', `/v1/transfers/${res.body.data.transferId}/approve`)).status).toBe(200);
    const approved = (await org.core.request('GET', `/v1/swaps/${res.body.data.id}`)).body.data;
    expect(ethers.parseUnits(approved.minimumOutput, 18)).toBe(raisedFloor);
    const done = await swapDone(res.body.data.id);
    expect(done.status).toBe('EXECUTED');
    expect(ethers.parseUnits(done.outputAmount, 18)).toBeGreaterThanOrEqual(raisedFloor);
  });

  test('a swap held for approval past its router deadline is approved with a fresh deadline (the minimum output kept while the price has not moved), and executes', async () => {
    const wallet = await createWallet(org, chain, { security: { requireApprovalForTransfers: true } });
    await fund(t, org, chain, wallet.walletAddress, '1');
    await fund(t, org, chain, wallet.walletAddress, '50', 'USDC');
    const res = await org.core.request('POST', '/v1/swaps', { body: { masterWalletId: wallet.id, fromAssetId: assets.USDC.id, toAssetId: assets.DAI.id, amount: '50' } });
    expect(res.body.data.status).toBe('PENDING_APPROVAL');
    // Held longer than the router's window: the deadline signed into the call has passed.
    const { db } = t.keel.platform;
    const router = new ethers.Interface(['function swapExactTokensForTokens(uint amountIn, uint amountOutMin, address[] path, address to, uint deadline)']);
    const swapRow = await db('swaps').where({ id: res.body.data.id }).first();
    const queued = router.parseTransaction({ data: (await db('transfer_items').where({ id: swapRow.swapItemId }).first()).callData })!;
    const expired = Math.floor(Date.now() / 1000) - 60;
    await db('transfer_items').where({ id: swapRow.swapItemId }).update({ callData: router.encodeFunctionData('swapExactTokensForTokens', [...queued.args.slice(0, -1), expired]) });

    expect((await approver.request('POST', `/v1/transfers/${res.body.data.transferId}/approve`)).status).toBe(200);
    const approved = router.parseTransaction({ data: (await db('transfer_items').where({ id: swapRow.swapItemId }).first()).callData })!;
    expect(approved.args.slice(0, -1).map(String)).toEqual(queued.args.slice(0, -1).map(String));
    expect(Number(approved.args.deadline)).toBeGreaterThan(Math.floor(Date.now() / 1000) + 1_700);
    const done = await swapDone(res.body.data.id);
    expect(done).toMatchObject({ status: 'EXECUTED', minimumOutput: res.body.data.minimumOutput });
  });

  test("another organisation's swaps are 404, and so is swapping from its wallets", async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    const mine = await org.core.request('POST', '/v1/swaps', { body: { masterWalletId: wallet.id, fromAssetId: assets.ETH.id, toAssetId: assets.USDC.id, amount: '0.01' } });
    expect(mine.status).toBe(201);
    expect((await other.core.request('GET', `/v1/swaps/${mine.body.data.id}`)).status).toBe(404);
    expect((await other.core.request('GET', '/v1/swaps')).body.data).toEqual([]);
    const theirs = await other.core.request('POST', '/v1/swaps', { body: { masterWalletId: wallet.id, fromAssetId: assets.ETH.id, toAssetId: assets.USDC.id, amount: '0.01' } });
    expect(theirs.status).toBe(404);
    const done = await swapDone(mine.body.data.id);
    expect(done).toMatchObject({ status: 'EXECUTED', recipient: wallet.walletAddress, route: ['ETH', 'USDC'] });
    expect(await balanceOf('USDC', wallet.walletAddress)).toBe(ethers.parseUnits(done.outputAmount, 6));
    const listed = (await org.core.request('GET', `/v1/swaps?masterWalletId=${wallet.id}&status=EXECUTED`)).body;
    expect(listed).toMatchObject({ total: 1, data: [{ id: done.id }] });

    // Idempotent: the same key returns the first swap (200) instead of swapping again.
    const key = { 'Idempotency-Key': randomUUID() };
    const body = { masterWalletId: wallet.id, fromAssetId: assets.ETH.id, toAssetId: assets.DAI.id, amount: '0.01' };
    const first = await org.core.request('POST', '/v1/swaps', { body, headers: key });
    const again = await org.core.request('POST', '/v1/swaps', { body, headers: key });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body.data.id).toBe(first.body.data.id);
    expect((await org.core.request('GET', `/v1/swaps?masterWalletId=${wallet.id}`)).body.total).toBe(2);
  });
});
