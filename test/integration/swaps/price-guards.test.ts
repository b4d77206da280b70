import { ethers } from 'ethers';
import { useTestKeel } from '../../support/use-test-keel';
import { anotherAdmin } from '../../support/keel';
import { eventually } from '../../support/eventually';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { Asset, assetsOf, balanceReader, createWallet, FAST, fund, randomAddress } from './support';

/**
 * Swaps keep to the price their owner expects, on the dev chains' Uniswap V2: the caller's
 * minimumOutput, the price-impact cap, and settlement-rule swaps checked against policy prices.
 * Moves only the USDC/USDT pool of chain B (with dev account 6); swaps that depend on that pool take
 * it directly (order CHEAPEST), so pools other suites move concurrently do not change the outcome.
 */
describe('swap price guards', () => {
  const { t, orgs: [org] } = useTestKeel({ ...FAST, SETTLEMENT_RULES_POLL_INTERVAL_MS: 100, SETTLEMENT_RULES_RETRY_BASE_MS: 500, SETTLEMENT_RULES_MAX_ATTEMPTS: 20 }, { orgs: 1 });
  let chainA: string;
  let chainB: string;
  let assetsA: Record<string, Asset>;
  let assetsB: Record<string, Asset>;
  let balanceB: (symbol: string, owner: string) => Promise<bigint>;
  const mover = devChainAccount(6);

  beforeAll(async () => {
    [chainA, chainB] = (await org.core.request('GET', '/v1/blockchains')).body.data.map((c: { id: string }) => c.id);
    assetsA = await assetsOf(org, chainA);
    assetsB = await assetsOf(org, chainB);
    balanceB = balanceReader(t.keel.services.networks.get(chainB)!.provider, assetsB);
  });

  const quote = async (chainAssets: Record<string, Asset>, from: string, to: string, amount: string, order = 'RECOMMENDED') => {
    const res = await org.core.request('GET', `/v1/swaps/quote?fromAssetId=${chainAssets[from].id}&toAssetId=${chainAssets[to].id}&amount=${amount}&order=${order}`);
    expect(res.status).toBe(200);
    return res.body.data as { expectedOutput: string; minimumOutput: string; priceImpact: string; route: { symbol: string }[] };
  };
  const swapDone = (id: string) =>
    eventually(async () => {
      const res = await org.core.request('GET', `/v1/swaps/${id}`);
      return ['EXECUTED', 'FAILED', 'REJECTED'].includes(res.body.data.status) && res.body.data;
    }, 45_000);

  /** Dev account 6 sells `amount` of `from` for `to` in chain B's pool, straight through the router. */
  async function movePool(from: 'USDC' | 'USDT', to: 'USDC' | 'USDT', amount: bigint) {
    const provider = t.keel.services.networks.get(chainB)!.provider;
    const signer = new ethers.Wallet(mover.privateKey, provider);
    const routerAddress = t.keel.services.networks.get(chainB)!.spec.dex!.router;
    const router = new ethers.Contract(routerAddress, ['function swapExactTokensForTokens(uint, uint, address[], address, uint) returns (uint[])'], signer);
    const token = new ethers.Contract(assetsB[from].address, ['function approve(address, uint256) returns (bool)'], signer);
    await (await token.approve(routerAddress, amount)).wait();
    await (await router.swapExactTokensForTokens(amount, 0, [assetsB[from].address, assetsB[to].address], mover.address, Math.floor(Date.now() / 1000) + 600)).wait();
  }

  test('a minimumOutput above what the pools give now is refused before anything is sent: 422 naming minimumOutput, over REST and GraphQL', async () => {
    const wallet = await createWallet(org, chainA);
    const q = await quote(assetsA, 'USDC', 'DAI', '100');
    const above = ethers.formatUnits(ethers.parseUnits(q.expectedOutput, 18) + 1n, 18);
    const res = await org.core.request('POST', '/v1/swaps', { body: { masterWalletId: wallet.id, fromAssetId: assetsA.USDC.id, toAssetId: assetsA.DAI.id, amount: '100', minimumOutput: above } });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'minimumOutput', error: 'ABOVE_EXPECTED_OUTPUT' }], expectedOutput: q.expectedOutput, minimumOutput: above } });
    expect(res.body.error.message).toMatch(/nothing was sent/);
    expect((await org.core.request('GET', `/v1/swaps?masterWalletId=${wallet.id}`)).body.total).toBe(0);

    const gql = await org.core.request('POST', '/graphql', {
      body: { query: 'mutation($i: SwapInput!) { createSwap(input: $i) { id } }', variables: { i: { masterWalletId: wallet.id, fromAssetId: assetsA.USDC.id, toAssetId: assetsA.DAI.id, amount: '100', minimumOutput: above } } },
    });
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'minimumOutput' }] } });
    const malformed = await org.core.request('POST', '/v1/swaps', { body: { masterWalletId: wallet.id, fromAssetId: assetsA.USDC.id, toAssetId: assetsA.DAI.id, amount: '100', minimumOutput: '1e3' } });
    expect([malformed.status, malformed.body.error.details.fields[0].field]).toEqual([422, 'minimumOutput']);
    const openapi = (await org.core.request('GET', '/v1/openapi.json')).body;
    expect(Object.keys(openapi.components.schemas.SwapInput.properties)).toEqual(expect.arrayContaining(['minimumOutput', 'maxPriceImpact']));
  });

  test('a price impact above the cap (3%) is refused unless the caller raises maxPriceImpact', async () => {
    const wallet = await createWallet(org, chainA, { security: { requireApprovalForTransfers: true } });
    await fund(t, org, chainA, wallet.walletAddress, '1');
    await fund(t, org, chainA, wallet.walletAddress, '400000', 'USDC');
    // 400,000 USDC into the 10M/10M USDC/USDT pool: about 3.8% of price impact.
    const q = await quote(assetsA, 'USDC', 'USDT', '400000');
    expect(Number(q.priceImpact)).toBeGreaterThan(3);
    expect(Number(q.priceImpact)).toBeLessThan(4);
    const body = { masterWalletId: wallet.id, fromAssetId: assetsA.USDC.id, toAssetId: assetsA.USDT.id, amount: '400000' };
    const refused = await org.core.request('POST', '/v1/swaps', { body });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'maxPriceImpact', error: 'PRICE_IMPACT_TOO_HIGH' }], priceImpact: q.priceImpact, maxPriceImpact: '3' } });
    expect(refused.body.error.message).toBe(`The swap's price impact is ${q.priceImpact}%, above the cap of 3%: swap less, or raise maxPriceImpact to accept it`);
    const tooLow = await org.core.request('POST', '/v1/swaps', { body: { ...body, maxPriceImpact: '3.5' } });
    expect(tooLow.body.error.details.maxPriceImpact).toBe('3.5');
    const malformed = await org.core.request('POST', '/v1/swaps', { body: { ...body, maxPriceImpact: '101' } });
    expect([malformed.status, malformed.body.error.details.fields[0].field]).toEqual([422, 'maxPriceImpact']);

    const raised = await org.core.request('POST', '/v1/swaps', { body: { ...body, maxPriceImpact: '4' } });
    expect(raised.status).toBe(201);
    expect(raised.body.data).toMatchObject({ status: 'PENDING_APPROVAL', priceImpact: q.priceImpact });
    // Held for approval, then rejected: the shared pool is left as it was.
    expect((await org.core.request('POST', `/v1/transfers/${raised.body.data.transferId}/reject`, { body: {} })).status).toBe(200);
    expect((await org.core.request('GET', `/v1/swaps/${raised.body.data.id}`)).body.data.status).toBe('REJECTED');
  });

  test("the caller's minimumOutput is the router's amountOutMin: a held swap whose pool then falls below it is refused by the router before it is signed, nothing swapped", async () => {
    const wallet = await createWallet(org, chainB, { security: { requireApprovalForTransfers: true } });
    await fund(t, org, chainB, wallet.walletAddress, '1');
    await fund(t, org, chainB, wallet.walletAddress, '100', 'USDC');
    // CHEAPEST: the direct USDC/USDT pool (the one this test moves), whatever other suites do to the ETH pools.
    const q = await quote(assetsB, 'USDC', 'USDT', '100', 'CHEAPEST');
    expect(q.route.map((step) => step.symbol)).toEqual(['USDC', 'USDT']);
    const recipient = randomAddress();
    // A 5% slippage tolerance would accept less; the caller's floor (the quote's output) is stricter and wins.
    const res = await org.core.request('POST', '/v1/swaps', { body: { masterWalletId: wallet.id, fromAssetId: assetsB.USDC.id, toAssetId: assetsB.USDT.id, amount: '100', order: 'CHEAPEST', recipient, slippageTolerance: '5', minimumOutput: q.expectedOutput } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'PENDING_APPROVAL', minimumOutput: q.expectedOutput, slippageTolerance: '5' });
    const { db } = t.keel.platform;
    const item = await db('transfer_items').where({ id: (await db('swaps').where({ id: res.body.data.id }).first()).swapItemId }).first();
    const call = new ethers.Interface(['function swapExactTokensForTokens(uint amountIn, uint amountOutMin, address[] path, address to, uint deadline)']).parseTransaction({ data: item.callData })!;
    expect(call.args.amountOutMin).toBe(ethers.parseUnits(q.expectedOutput, 6));
    expect([...call.args.path]).toEqual([assetsB.USDC.address, assetsB.USDT.address]);

    // Someone sells 300,000 USDC for USDT in the pool: USDT per USDC falls about 6%, below the floor.
    await fund(t, org, chainB, mover.address, '1', undefined, false);
    await fund(t, org, chainB, mover.address, '300000', 'USDC', false);
    await eventually(async () => (await balanceB('USDC', mover.address)) >= ethers.parseUnits('300000', 6) && (await balanceB('ETH', mover.address)) > 0n, 30_000);
    await movePool('USDC', 'USDT', ethers.parseUnits('300000', 6));
    // The held swap's own path (the direct pool) now gives less than the floor. Keel's quote is not
    // the yardstick here: it may route around the moved pool through ETH, whose pools other suites move.
    const floor = ethers.parseUnits(q.expectedOutput, 6);
    const router = new ethers.Contract(t.keel.services.networks.get(chainB)!.spec.dex!.router, ['function getAmountsOut(uint, address[]) view returns (uint[])'], t.keel.services.networks.get(chainB)!.provider);
    const directOutput = async () => (await router.getAmountsOut(ethers.parseUnits('100', 6), [assetsB.USDC.address, assetsB.USDT.address]))[1] as bigint;
    await eventually(async () => (await directOutput()) < floor, 30_000);

    expect((await (await anotherAdmin(org)).core.request('POST', `/v1/transfers/${res.body.data.transferId}/approve`)).status).toBe(200);
    const done = await swapDone(res.body.data.id);
    // The router's own check refused it when the sender estimated its gas: never signed, no gas spent.
    expect(done).toMatchObject({ status: 'FAILED', outputAmount: null, minimumOutput: q.expectedOutput, txHash: null });
    expect(done.error).toMatch(/^the chain refuses the transaction: .*INSUFFICIENT_OUTPUT_AMOUNT/);
    expect(await balanceB('USDC', wallet.walletAddress)).toBe(ethers.parseUnits('100', 6));
    expect(await balanceB('USDT', recipient)).toBe(0n);
  });

  test('a settlement-rule swap is not traded while the pool is off the reference price (the execution fails with the reason and is retried), and executes once the pool is back', async () => {
    // Chain B's USDC/USDT pool is still about 6% off par (the test above moved it). CHEAPEST takes that
    // direct pool (RECOMMENDED would route around it through ETH, whose pools are untouched).
    const wallet = await createWallet(org, chainB);
    await fund(t, org, chainB, wallet.walletAddress, '1');
    const destination = randomAddress();
    const created = await org.core.request('POST', '/v1/settlement-rules', {
      body: { masterWalletId: wallet.id, name: 'To USDT', order: 'CHEAPEST', slippageTolerance: '1', source: { blockchainId: chainB, assetIds: [assetsB.USDC.id] }, destination: { blockchainId: chainB, assetId: assetsB.USDT.id, address: destination } },
    });
    expect(created.status).toBe(201);
    await fund(t, org, chainB, wallet.walletAddress, '50', 'USDC');
    const executions = async () => (await org.core.request('GET', `/v1/settlement-rules/${created.body.data.id}/executions`)).body.data;
    const failing = await eventually(async () => {
      const [e] = await executions();
      return e?.attempts >= 2 && e;
    }, 45_000);
    expect(failing).toMatchObject({ status: 'PENDING', swapId: null });
    expect(failing.error).toMatch(/^not traded: the pool is off the reference price: 50 USDC would give [\d.]+ USDT, [\d.]+% less than at reference prices \(USDC 1 USD, par; USDT 1 USD, par\); at most 3% is allowed$/);
    expect(await balanceB('USDC', wallet.walletAddress)).toBe(ethers.parseUnits('50', 6));

    // The mover sells back what it bought: the pool returns near par, and the next attempt trades.
    await movePool('USDT', 'USDC', await balanceB('USDT', mover.address));
    const done = await eventually(async () => {
      const [e] = await executions();
      return e?.status === 'EXECUTED' && e;
    }, 60_000);
    expect(done.error).toBeNull();
    expect(await balanceB('USDT', destination)).toBeGreaterThan(ethers.parseUnits('49', 6));
  });

  test('a settlement-rule swap of an asset with no trustworthy price is not traded, saying why', async () => {
    const wallet = await createWallet(org, chainA);
    const created = await org.core.request('POST', '/v1/settlement-rules', {
      body: { masterWalletId: wallet.id, name: 'ETH to USDC', source: { blockchainId: chainA, assetIds: [assetsA.ETH.id] }, destination: { blockchainId: chainA, assetId: assetsA.USDC.id, address: randomAddress() } },
    });
    expect(created.status).toBe(201);
    await fund(t, org, chainA, wallet.walletAddress, '0.5');
    const [failing] = await eventually(async () => {
      const list = await (await org.core.request('GET', `/v1/settlement-rules/${created.body.data.id}/executions`)).body.data;
      return list[0]?.attempts >= 1 && list;
    }, 45_000);
    expect(failing.error).toMatch(/^not traded: no reference price to check the pool against \(no trustworthy USD price for ETH: no trade of ETH in the last 3600s/);
  });
});
