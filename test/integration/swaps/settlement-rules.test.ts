import { ethers } from 'ethers';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { eventually, WebhookReceiver } from '../../support/webhook-receiver';
import { ApiClient } from '../../support/api-client';
import { SettlementOutcomes } from '../../../src/modules/settlement-rules/settlement-outcomes';
import { SettlementExecutor } from '../../../src/modules/settlement-rules/settlement-executor';
import { SettlementRuleWorker } from '../../../src/modules/settlement-rules/settlement-rule-worker';
import { createLogger } from '../../../src/platform/logger';
import { INTERNAL_REASON } from '../../../src/platform/shown-reason';
import { SettlementTrigger } from '../../../src/modules/settlement-rules/settlement-trigger';
import { chainTransferById } from '../../../src/modules/deposits';
import { Asset, assetsOf, balanceReader, createWallet, FAST, fund, randomAddress } from './support';

/**
 * Settlement rules on the shared dev chain (chain 0): deposits confirmed by Keel's watcher are swept
 * or swapped on the chain's Uniswap V2 and sent to the rule's destination, once.
 */
describe('settlement rules', () => {
  let t: TestKeel;
  let org: TestOrg;
  let other: TestOrg;
  let chain: string;
  let assets: Record<string, Asset>;
  let balanceOf: (symbol: string, owner: string) => Promise<bigint>;
  let provider: ethers.JsonRpcProvider;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    t = await startTestKeel({ ...FAST, SETTLEMENT_RULES_POLL_INTERVAL_MS: 100, SETTLEMENT_RULES_RETRY_BASE_MS: 500 });
    org = await t.createOrg();
    other = await t.createOrg();
    chain = (await org.core.request('GET', '/v1/blockchains')).body.data[0].id;
    assets = await assetsOf(org, chain);
    // A provider of the test's own: the Keel's are closed when it restarts.
    provider = new ethers.JsonRpcProvider(t.keel.services.networks.get(chain)!.spec.rpcUrl, undefined, { cacheTimeout: -1 });
    balanceOf = balanceReader(provider, assets);
    const url = await receiver.start();
    expect((await org.core.request('POST', '/v1/webhooks', { body: { url, name: 'rules', eventTypes: ['*'] } })).status).toBe(201);
  });
  afterAll(async () => {
    await receiver.stop();
    provider?.destroy();
    await t?.stop();
  });

  const reconnect = () => {
    org = { ...org, core: new ApiClient(t.coreUrl, org.core.credentials) };
    other = { ...other, core: new ApiClient(t.coreUrl, other.core.credentials) };
  };
  const events = (type: string) => receiver.requests.map((r) => JSON.parse(r.body)).filter((e) => e.type === type);
  const eventWhere = (type: string, match: (data: any) => boolean) => eventually(() => events(type).find((e) => match(e.data)), 45_000);
  const createRule = async (body: object, client = org) => {
    const res = await client.core.request('POST', '/v1/settlement-rules', { body });
    expect(res.status).toBe(201);
    return res.body.data;
  };
  const executions = async (ruleId: string) => (await org.core.request('GET', `/v1/settlement-rules/${ruleId}/executions`)).body.data;
  const executed = (ruleId: string, count = 1) =>
    eventually(async () => {
      const list = await executions(ruleId);
      return list.filter((e: { status: string }) => e.status === 'EXECUTED').length >= count && list;
    }, 60_000);

  test('a USDC deposit within the bounds is converted to DAI on the DEX and sent to the destination; those below the minimum or above the maximum are left alone', async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    const destination = randomAddress();
    const rule = await createRule({
      masterWalletId: wallet.id,
      name: 'USDC to DAI treasury',
      order: 'RECOMMENDED',
      slippageTolerance: '1',
      source: { blockchainId: chain, assetIds: [assets.USDC.id], minAmount: '10', maxAmount: '1000' },
      destination: { blockchainId: chain, assetId: assets.DAI.id, address: destination },
    });
    expect(rule).toMatchObject({ walletId: wallet.id, walletType: 'MASTER', isActive: true, order: 'RECOMMENDED', slippageTolerance: '1', source: { assetIds: [assets.USDC.id], minAmount: '10', maxAmount: '1000' }, delay: 0 });
    expect((await org.core.request('GET', `/v1/master-wallets/${wallet.id}`)).body.data.analytics.autoSettlementRulesCount).toBe(1);

    const small = await fund(t, org, chain, wallet.walletAddress, '5', 'USDC');
    const large = await fund(t, org, chain, wallet.walletAddress, '1000.01', 'USDC');
    await fund(t, org, chain, wallet.walletAddress, '200', 'USDC');
    const [done] = await executed(rule.id);
    expect(await executions(rule.id)).toHaveLength(1);
    expect([small, large]).not.toContain(done.depositTxHash);
    expect(done).toMatchObject({ kind: 'swap', amount: '200', asset: { symbol: 'USDC' }, attempts: 1 });
    const swap = (await org.core.request('GET', `/v1/swaps/${done.swapId}`)).body.data;
    expect(swap).toMatchObject({ status: 'EXECUTED', recipient: destination, amount: '200', route: ['USDC', 'DAI'] });
    const received = await balanceOf('DAI', destination);
    expect(received).toBeGreaterThanOrEqual(ethers.parseUnits(swap.minimumOutput, 18));
    expect(received).toBeGreaterThan(ethers.parseUnits('190', 18));
    // The 5 and the 1000.01 USDC stayed; the 200 were swapped away.
    expect(await balanceOf('USDC', wallet.walletAddress)).toBe(ethers.parseUnits('1005.01', 6));

    const event = await eventWhere('master_settlement_rule.executed', (d) => d.ruleId === rule.id);
    expect(event.data).toMatchObject({
      ruleId: rule.id,
      ruleName: 'USDC to DAI treasury',
      order: 'RECOMMENDED',
      slippageTolerance: '1',
      source: [{ assetId: assets.USDC.id, minAmount: '10', maxAmount: '1000' }],
      destination: { assetId: assets.DAI.id, address: destination },
      wallet: { id: wallet.id, name: 'Treasury' },
      blockchain: { id: chain },
      txhash: done.txHash,
      amount: '200',
      asset: { id: assets.USDC.id, symbol: 'USDC' },
    });
    const swapEvent = await eventWhere('master.swap_executed', (d) => d.swapId === swap.id);
    expect(swapEvent.data).toMatchObject({ srcWalet: { id: wallet.id, name: 'Treasury', walletAddress: wallet.walletAddress }, dstAddress: destination, inputAmount: 200, outputAmount: Number(swap.outputAmount) });
    expect((await eventWhere('master_settlement_rule.created', (d) => d.ruleId === rule.id)).data).toMatchObject({ name: 'USDC to DAI treasury', walletId: wallet.id });
  });

  test('the amount bounds are exact, finer than the asset\'s smallest unit too: a minimum of 10.0000005 USDC (6 decimals) is not met by 10 USDC, a maximum of 20.0000005 is not by 20.000001', async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    const rule = await createRule({ masterWalletId: wallet.id, name: 'fine bounds', source: { blockchainId: chain, assetIds: [assets.USDC.id], minAmount: '10.0000005', maxAmount: '20.0000005' }, destination: { blockchainId: chain, assetId: assets.USDC.id, address: randomAddress() } });
    // Each deposit's executions are recorded in the transaction that records it: none for those out of bounds.
    await fund(t, org, chain, wallet.walletAddress, '10', 'USDC');
    await fund(t, org, chain, wallet.walletAddress, '20.000001', 'USDC');
    expect(await executions(rule.id)).toEqual([]);
    await fund(t, org, chain, wallet.walletAddress, '10.000001', 'USDC');
    await fund(t, org, chain, wallet.walletAddress, '20', 'USDC');
    expect((await executed(rule.id, 2)).map((e: { amount: string }) => e.amount).sort()).toEqual(['10.000001', '20']);
  });

  test("a deposit two rules match is settled once, by the older rule: the newer records a CANCELLED execution naming it, and the wallet's other money stays", async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    await fund(t, org, chain, wallet.walletAddress, '50', 'USDC');
    const [first, second] = [randomAddress(), randomAddress()];
    const older = await createRule({ masterWalletId: wallet.id, name: 'USDC to the first', source: { blockchainId: chain, assetIds: [assets.USDC.id] }, destination: { blockchainId: chain, assetId: assets.USDC.id, address: first } });
    const newer = await createRule({ masterWalletId: wallet.id, name: 'anything to the second', source: { blockchainId: chain }, destination: { blockchainId: chain, assetId: assets.USDC.id, address: second } });

    await fund(t, org, chain, wallet.walletAddress, '30', 'USDC');
    const [done] = await executed(older.id);
    expect(done).toMatchObject({ kind: 'sweep', amount: '30' });
    const [skipped] = await executions(newer.id);
    expect(skipped).toMatchObject({ depositId: done.depositId, status: 'CANCELLED', attempts: 0, transferId: null, nextAttemptAt: null, error: expect.stringContaining(`settled by the older rule "USDC to the first" (${older.id})`) });
    // Given the worker time to send anything else: nothing else leaves.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await balanceOf('USDC', first)).toBe(ethers.parseUnits('30', 6));
    expect(await balanceOf('USDC', second)).toBe(0n);
    expect(await balanceOf('USDC', wallet.walletAddress)).toBe(ethers.parseUnits('50', 6));
    expect(await t.keel.platform.db('transfers').where({ masterWalletId: wallet.id, kind: 'sweep' })).toHaveLength(1);

    // The older rule switched off, the newer is the only one that matches: it settles the next deposit.
    expect((await org.core.request('POST', `/v1/settlement-rules/${older.id}/deactivate`)).status).toBe(200);
    await fund(t, org, chain, wallet.walletAddress, '12', 'USDC');
    expect((await executed(newer.id)).find((e: { status: string }) => e.status === 'EXECUTED')).toMatchObject({ amount: '12' });
    expect(await balanceOf('USDC', second)).toBe(ethers.parseUnits('12', 6));

    // A reorg takes the first deposit back after it was sent and the new fork confirms it again (the
    // watcher's two calls, in one transaction), when only a rule created since matches it: nothing
    // new is recorded, the deposit was settled.
    expect((await org.core.request('POST', `/v1/settlement-rules/${newer.id}/deactivate`)).status).toBe(200);
    const newest = await createRule({ masterWalletId: wallet.id, name: 'created since', source: { blockchainId: chain }, destination: { blockchainId: chain, assetId: assets.USDC.id, address: randomAddress() } });
    const trigger = new SettlementTrigger();
    await t.keel.platform.db.transaction(async (trx) => {
      const deposit = (await chainTransferById(trx, done.depositId))!;
      await trigger.reverted(trx, [deposit]);
      await trigger.confirmed(trx, [deposit]);
    });
    expect(await executions(newest.id)).toEqual([]);
    expect((await executions(older.id)).find((e: { depositId: string }) => e.depositId === done.depositId)).toMatchObject({ status: 'EXECUTED', depositRevertedAt: expect.any(String) });
  });

  test('a native deposit to a deposit address is swept to the destination less its gas, and reported as address_settlement_rule.executed', async () => {
    const wallet = await createWallet(org, chain);
    const address = (await org.core.request('POST', `/v1/master-wallets/${wallet.id}/addresses`, { body: { name: 'Customer 7' } })).body.data;
    const destination = randomAddress();
    const rule = await createRule({ addressId: address.id, name: 'Sweep ETH', source: { blockchainId: chain, assetIds: [assets.ETH.id] }, destination: { blockchainId: chain, assetId: assets.ETH.id, address: destination } });
    expect(rule).toMatchObject({ walletId: address.id, walletType: 'ADDRESS', order: 'FASTEST' });
    expect((await org.core.request('GET', `/v1/addresses/${address.id}/settlement-rules`)).body.data.map((r: { id: string }) => r.id)).toEqual([rule.id]);

    await fund(t, org, chain, address.address, '0.5');
    const [done] = await executed(rule.id);
    expect(done).toMatchObject({ kind: 'sweep', amount: '0.5' });
    const swept = await balanceOf('ETH', destination);
    expect(swept).toBeLessThanOrEqual(ethers.parseEther('0.5'));
    expect(swept).toBeGreaterThan(ethers.parseEther('0.49'));
    const event = await eventWhere('address_settlement_rule.executed', (d) => d.ruleId === rule.id);
    expect(event.data).toMatchObject({ wallet: { id: address.id, name: 'Customer 7' }, asset: { id: assets.ETH.id, symbol: 'ETH' }, amount: '0.5', txhash: done.txHash, destination: { assetId: assets.ETH.id, address: destination } });
  });

  test('a USDC deposit to a deposit address without gas: the master wallet tops it up, then the address swaps to DAI (address.swap_executed)', async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    const address = (await org.core.request('POST', `/v1/master-wallets/${wallet.id}/addresses`, { body: { name: 'Customer 9' } })).body.data;
    const destination = randomAddress();
    const rule = await createRule({ addressId: address.id, name: 'Convert', order: 'CHEAPEST', source: { blockchainId: chain, assetIds: [assets.USDC.id] }, destination: { blockchainId: chain, assetId: assets.DAI.id, address: destination } });
    await fund(t, org, chain, address.address, '75', 'USDC');
    const [done] = await executed(rule.id);
    expect(done).toMatchObject({ kind: 'swap', amount: '75' });
    const swap = (await org.core.request('GET', `/v1/swaps/${done.swapId}`)).body.data;
    expect(swap).toMatchObject({ status: 'EXECUTED', addressId: address.id, fromAddress: address.address, recipient: destination, order: 'CHEAPEST' });
    expect(await balanceOf('DAI', destination)).toBeGreaterThanOrEqual(ethers.parseUnits(swap.minimumOutput, 18));
    expect(await t.keel.platform.db('transfers').where({ masterWalletId: wallet.id, addressId: null, kind: 'gas_topup' })).toHaveLength(1);
    const swapEvent = await eventWhere('address.swap_executed', (d) => d.swapId === swap.id);
    expect(swapEvent.data).toMatchObject({ srcWalet: { id: address.id, name: 'Customer 9', walletAddress: address.address }, dstAsset: { symbol: 'DAI' }, inputAmount: 75 });
    await eventWhere('address_settlement_rule.executed', (d) => d.ruleId === rule.id && d.txhash === swap.txHash);
  });

  test('a deactivated rule and a deleted rule do nothing; updates and deletion are reported', async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    const body = (name: string) => ({ masterWalletId: wallet.id, name, source: { blockchainId: chain }, destination: { blockchainId: chain, assetId: assets.USDC.id, address: randomAddress() } });
    const paused = await createRule(body('paused'));
    const deleted = await createRule(body('deleted'));
    const off = await org.core.request('POST', `/v1/settlement-rules/${paused.id}/deactivate`);
    expect(off.body.data.isActive).toBe(false);
    const gone = await org.core.request('DELETE', `/v1/addresses/settlement-rules/${deleted.id}`);
    expect(gone.status).toBe(200);
    expect(gone.body).toMatchObject({ data: { id: deleted.id }, message: expect.any(String) });
    expect((await org.core.request('GET', `/v1/settlement-rules/${deleted.id}`)).status).toBe(404);
    expect((await org.core.request('GET', `/v1/master-wallets/${wallet.id}/settlement-rules`)).body).toMatchObject({ data: [{ id: paused.id, isActive: false }], total: 1, hasMore: false });
    expect((await org.core.request('GET', `/v1/master-wallets/${wallet.id}`)).body.data.analytics.autoSettlementRulesCount).toBe(0);

    // The deposit is recorded in the transaction that would record any execution: none exists.
    await fund(t, org, chain, wallet.walletAddress, '50', 'USDC');
    expect(await t.keel.platform.db('settlement_rule_executions').whereIn('ruleId', [paused.id, deleted.id])).toEqual([]);

    const renamed = await org.core.request('PATCH', `/v1/settlement-rules/${paused.id}`, { body: { name: 'resumed', isActive: true } });
    expect(renamed.body.data).toMatchObject({ name: 'resumed', isActive: true });
    await eventWhere('master_settlement_rule.updated', (d) => d.ruleId === paused.id && d.name === 'resumed');
    await eventWhere('master_settlement_rule.deleted', (d) => d.ruleId === deleted.id);
  });

  test('a failed execution is reported and retried with backoff, and succeeds once the wallet can pay gas', async () => {
    const wallet = await createWallet(org, chain);
    const destination = randomAddress();
    const rule = await createRule({ masterWalletId: wallet.id, name: 'USDC out', source: { blockchainId: chain, assetIds: [assets.USDC.id] }, destination: { blockchainId: chain, assetId: assets.USDC.id, address: destination } });
    // No native coin: the sweep cannot pay gas.
    await fund(t, org, chain, wallet.walletAddress, '30', 'USDC');
    const failure = await eventWhere('master_settlement_rule.failed', (d) => d.ruleId === rule.id);
    expect(failure.data).toMatchObject({ amount: '30', attempts: 1, error: expect.stringMatching(/refuses|gas|funds/i) });
    expect(failure.data.nextAttemptAt).not.toBeNull();
    await fund(t, org, chain, wallet.walletAddress, '1', undefined, false);
    const [done] = await executed(rule.id);
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    expect(await balanceOf('USDC', destination)).toBe(ethers.parseUnits('30', 6));
  });

  test("an execution that PostgreSQL fails while it is prepared shows callers a generic error, not the SQL knex quoted; once PostgreSQL takes it, it goes through", async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    const destination = randomAddress();
    const rule = await createRule({ masterWalletId: wallet.id, name: 'refused by PostgreSQL', source: { blockchainId: chain, assetIds: [assets.USDC.id] }, destination: { blockchainId: chain, assetId: assets.USDC.id, address: destination } });
    // A real PostgreSQL refusal of the sweep's line, and of it alone: a check constraint it breaks.
    const { db } = t.keel.platform;
    const constraint = `refuse_${destination.slice(2, 12).toLowerCase()}`;
    await db.raw(`alter table transfer_items add constraint ${constraint} check (lower(recipient) <> '${destination.toLowerCase()}') not valid`);
    try {
      await fund(t, org, chain, wallet.walletAddress, '40', 'USDC');
      const failure = await eventWhere('master_settlement_rule.failed', (d) => d.ruleId === rule.id);
      const [shown] = await executions(rule.id);
      for (const error of [failure.data.error, shown.error]) {
        expect(error).toBe("internal error (see the node's log)");
        expect(error).not.toMatch(/insert into|transfer_items|violates check constraint/i);
      }
      expect(shown).toMatchObject({ status: 'PENDING', transferId: null });
    } finally {
      await db.raw(`alter table transfer_items drop constraint ${constraint}`);
    }
    const [done] = await executed(rule.id);
    expect(done).toMatchObject({ kind: 'sweep', amount: '40', error: null });
    expect(done.attempts).toBeGreaterThanOrEqual(2);
  });

  test("under requireApprovalForTransfers the execution's transfer waits for approval; a rejected one fails the execution for good", async () => {
    const wallet = await createWallet(org, chain, { security: { requireApprovalForTransfers: true } });
    await fund(t, org, chain, wallet.walletAddress, '1');
    const rule = await createRule({ masterWalletId: wallet.id, name: 'held', source: { blockchainId: chain, assetIds: [assets.DAI.id] }, destination: { blockchainId: chain, assetId: assets.DAI.id, address: randomAddress() } });
    await fund(t, org, chain, wallet.walletAddress, '12', 'DAI');
    const [submitted] = await eventually(async () => {
      const list = await executions(rule.id);
      return list[0]?.status === 'SUBMITTED' && list;
    });
    expect((await org.core.request('GET', `/v1/transfers/${submitted.transferId}`)).body.data.status).toBe('PENDING_APPROVAL');
    expect((await org.core.request('POST', `/v1/transfers/${submitted.transferId}/reject`)).status).toBe(200);
    // Failed by the rejection itself (the transfers' rejection hook), in its transaction: no poll involved.
    const [failed] = await executions(rule.id);
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toMatch(/rejected/);
    const { db } = t.keel.platform;
    const [stored, transfer] = await Promise.all([db('settlement_rule_executions').where({ id: failed.id }).first(), db('transfers').where({ id: submitted.transferId }).first()]);
    expect(stored.updatedAt).toEqual(transfer.decidedAt);
    const event = await eventWhere('master_settlement_rule.failed', (d) => d.ruleId === rule.id);
    expect(event.data).toMatchObject({ amount: '12', nextAttemptAt: null, error: expect.stringMatching(/rejected/) });
  });

  /** A deposit address without gas under requireApprovalForTransfers: its conversion and the master wallet's gas top-up for it, both held. */
  const heldConversion = async (addressName: string) => {
    const wallet = await createWallet(org, chain, { security: { requireApprovalForTransfers: true } });
    await fund(t, org, chain, wallet.walletAddress, '1');
    const address = (await org.core.request('POST', `/v1/master-wallets/${wallet.id}/addresses`, { body: { name: addressName } })).body.data;
    const rule = await createRule({ addressId: address.id, name: `Convert for ${addressName}`, order: 'CHEAPEST', source: { blockchainId: chain, assetIds: [assets.USDC.id] }, destination: { blockchainId: chain, assetId: assets.DAI.id, address: randomAddress() } });
    await fund(t, org, chain, address.address, '30', 'USDC');
    const [submitted] = await eventually(async () => {
      const list = await executions(rule.id);
      return list[0]?.status === 'SUBMITTED' && list;
    });
    const topUp = await eventually(async () => (await t.keel.platform.db('transfers').where({ masterWalletId: wallet.id, addressId: null, kind: 'gas_topup', status: 'PENDING_APPROVAL' }).first()) ?? false);
    return { rule, submitted, topUp, address };
  };

  test("rejecting a deposit address's gas top-up rejects the conversion held with it: the execution fails for good and the conversion's funds are no longer reserved", async () => {
    const { rule, submitted, topUp, address } = await heldConversion('Customer 11');
    const { db } = t.keel.platform;
    const spendableUsdc = async () => String((await db('ledger_balances').where({ walletId: address.id, assetId: assets.USDC.id, account: 'custody' }).first())?.available ?? '0');
    expect(await spendableUsdc()).toBe('0');
    expect((await org.core.request('POST', `/v1/transfers/${topUp.id}/reject`)).status).toBe(200);
    // Rejected in the same transaction: no poll involved.
    expect((await org.core.request('GET', `/v1/transfers/${submitted.transferId}`)).body.data.status).toBe('REJECTED');
    expect(await spendableUsdc()).toBe('30000000');
    expect((await org.core.request('POST', `/v1/transfers/${submitted.transferId}/approve`)).body.error.code).toBe('CONFLICT');
    expect((await executions(rule.id))[0]).toMatchObject({ status: 'FAILED', attempts: 1, error: expect.stringMatching(/gas top-up it waited for was rejected/) });
  });

  test('rejecting a conversion and its gas top-up at once: one rejection waits for the other, never a deadlock, and both are rejected', async () => {
    const { rule, submitted, topUp } = await heldConversion('Customer 13');
    const answers = await Promise.all([org.core.request('POST', `/v1/transfers/${topUp.id}/reject`), org.core.request('POST', `/v1/transfers/${submitted.transferId}/reject`)]);
    // Whichever came second waited for the first, then found its transfer already rejected by it.
    expect(answers.map((a) => a.body.error?.code ?? a.status).sort()).toEqual([200, 'CONFLICT']);
    for (const id of [topUp.id, submitted.transferId]) expect((await org.core.request('GET', `/v1/transfers/${id}`)).body.data.status).toBe('REJECTED');
    expect((await executions(rule.id))[0]).toMatchObject({ status: 'FAILED', attempts: 1 });
  });

  test("rejecting a deposit address's conversion rejects the gas top-up held for it: no gas money moves for a send that will not happen", async () => {
    const { rule, submitted, topUp } = await heldConversion('Customer 12');
    expect((await org.core.request('POST', `/v1/transfers/${submitted.transferId}/reject`)).status).toBe(200);
    expect((await org.core.request('GET', `/v1/transfers/${topUp.id}`)).body.data.status).toBe('REJECTED');
    expect((await org.core.request('POST', `/v1/transfers/${topUp.id}/approve`)).body.error.code).toBe('CONFLICT');
    expect((await executions(rule.id))[0]).toMatchObject({ status: 'FAILED', error: expect.stringMatching(/the transfer was rejected/) });
  });

  test('a rule fires once per deposit across a restart and with two workers racing for its execution', async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    const destination = randomAddress();
    const rule = await createRule({ masterWalletId: wallet.id, name: 'delayed', delay: 2, source: { blockchainId: chain, assetIds: [assets.USDT.id] }, destination: { blockchainId: chain, assetId: assets.USDT.id, address: destination } });
    await fund(t, org, chain, wallet.walletAddress, '40', 'USDT');
    expect((await executions(rule.id)).map((e: { status: string }) => e.status)).toEqual(['PENDING']);

    // Down and back without the worker role; then two workers of our own race over the due execution.
    await t.restart({ KEEL_ROLES: 'api' });
    reconnect();
    await new Promise((r) => setTimeout(r, 2_100));
    const { services, platform } = t.keel;
    const worker = () => {
      const outcomes = new SettlementOutcomes(services.chains, services.sendingWallets, platform.outbox, { baseBackoffMs: 500, maxBackoffMs: 5_000, maxAttempts: 5 }, platform.logger);
      const executor = new SettlementExecutor(services.sendingWallets, services.chains, services.networks, services.transfers, services.swaps, services.destinationScreen, services.settlementContractGuard, services.gasTopUps, services.prices, 300n);
      return new SettlementRuleWorker(platform.db, executor, outcomes, { pollIntervalMs: 100 }, platform.logger);
    };
    const [w1, w2] = [worker(), worker()];
    await Promise.all([w1.tick(), w2.tick(), w1.tick(), w2.tick()]);
    expect((await executions(rule.id)).map((e: { status: string; attempts: number }) => [e.status, e.attempts])).toEqual([['SUBMITTED', 1]]);

    await t.restart({ KEEL_ROLES: 'api,worker' });
    reconnect();
    const [done] = await executed(rule.id);
    expect(done.attempts).toBe(1);
    expect(await executions(rule.id)).toHaveLength(1);
    expect(await t.keel.platform.db('transfers').where({ masterWalletId: wallet.id, kind: 'sweep' })).toHaveLength(1);
    expect(await balanceOf('USDT', destination)).toBe(ethers.parseUnits('40', 6));
  });

  test('an attempt that fails in a way Keel has no words for reads the generic reason, its error logged once; the next attempt goes', async () => {
    const wallet = await createWallet(org, chain);
    await fund(t, org, chain, wallet.walletAddress, '1');
    const rule = await createRule({ masterWalletId: wallet.id, name: 'screened', delay: 2, source: { blockchainId: chain, assetIds: [assets.USDT.id] }, destination: { blockchainId: chain, assetId: assets.USDT.id, address: randomAddress() } });
    await fund(t, org, chain, wallet.walletAddress, '40', 'USDT');
    const [pending] = await executions(rule.id);
    expect(pending.status).toBe('PENDING');

    // Without Keel's own worker, the test's takes the due execution; its destination screen fails unexpectedly.
    await t.restart({ KEEL_ROLES: 'api' });
    reconnect();
    await new Promise((r) => setTimeout(r, 2_100));
    const lines: string[] = [];
    const logger = createLogger('debug', { write: (line: string) => void lines.push(line) });
    const unexpected = new TypeError("Cannot read properties of undefined (reading 'sanctioned')");
    const { services, platform } = t.keel;
    const outcomes = new SettlementOutcomes(services.chains, services.sendingWallets, platform.outbox, { baseBackoffMs: 500, maxBackoffMs: 5_000, maxAttempts: 5 }, logger);
    const executor = new SettlementExecutor(services.sendingWallets, services.chains, services.networks, services.transfers, services.swaps, { check: async () => Promise.reject(unexpected) }, services.settlementContractGuard, services.gasTopUps, services.prices, 300n);
    await new SettlementRuleWorker(platform.db, executor, outcomes, { pollIntervalMs: 100 }, logger).tick();
    expect((await executions(rule.id))[0]).toMatchObject({ status: 'PENDING', attempts: 1, error: INTERNAL_REASON });
    const logged = lines.map((l) => JSON.parse(l)).filter((l) => l.err?.message === unexpected.message);
    expect(logged).toEqual([expect.objectContaining({ msg: 'settlement rule execution failed', executionId: pending.id, error: INTERNAL_REASON, err: expect.objectContaining({ type: 'TypeError' }) })]);

    await t.restart({ KEEL_ROLES: 'api,worker' });
    reconnect();
    expect((await executed(rule.id))[0].attempts).toBe(2);
  });

  test("another organisation's rules, executions, swaps and wallets are 404 to it", async () => {
    const wallet = await createWallet(org, chain);
    const address = (await org.core.request('POST', `/v1/master-wallets/${wallet.id}/addresses`, { body: { name: 'Customer 15' } })).body.data;
    const rule = await createRule({ masterWalletId: wallet.id, name: 'mine', source: { blockchainId: chain }, destination: { blockchainId: chain, assetId: assets.ETH.id, address: randomAddress() } });
    for (const [method, path, body] of [
      ['GET', `/v1/settlement-rules/${rule.id}`],
      ['PATCH', `/v1/settlement-rules/${rule.id}`, { name: 'theirs' }],
      ['POST', `/v1/settlement-rules/${rule.id}/deactivate`],
      ['DELETE', `/v1/settlement-rules/${rule.id}`],
      ['DELETE', `/v1/addresses/settlement-rules/${rule.id}`],
      ['GET', `/v1/settlement-rules/${rule.id}/executions`],
      ['GET', `/v1/master-wallets/${wallet.id}/settlement-rules`],
      ['GET', `/v1/addresses/${address.id}/settlement-rules`],
      ['POST', '/v1/settlement-rules', { masterWalletId: wallet.id, name: 'x', source: { blockchainId: chain }, destination: { blockchainId: chain, assetId: assets.ETH.id, address: randomAddress() } }],
      ['POST', '/v1/swaps', { masterWalletId: wallet.id, fromAssetId: assets.ETH.id, toAssetId: assets.DAI.id, amount: '1' }],
      ['GET', '/v1/settlement-rules/not-a-uuid'],
    ] as [string, string, object?][]) {
      const res = await other.core.request(method, path, { body });
      // Wallets answer with the spec's WALLET_NOT_FOUND, everything else NOT_FOUND: 404 either way.
      expect([path, res.status, res.body.error?.code]).toEqual([path, 404, expect.stringMatching(/^(WALLET_)?NOT_FOUND$/)]);
    }
    expect((await other.core.request('GET', '/v1/settlement-rules')).body.data).toEqual([]);
    expect((await org.core.request('GET', `/v1/settlement-rules/${rule.id}`)).body.data.name).toBe('mine');
  });

  test("a deactivated address's rules and an inactive master wallet's are still listed: reading them needs only the wallet to be the caller's", async () => {
    const wallet = await createWallet(org, chain);
    const address = (await org.core.request('POST', `/v1/master-wallets/${wallet.id}/addresses`, { body: { name: 'Customer 14' } })).body.data;
    const body = (source: object) => ({ ...source, name: 'kept', source: { blockchainId: chain }, destination: { blockchainId: chain, assetId: assets.ETH.id, address: randomAddress() } });
    const ofAddress = await createRule(body({ addressId: address.id }));
    const ofWallet = await createRule(body({ masterWalletId: wallet.id }));
    expect((await org.core.request('PATCH', `/v1/addresses/${address.id}`, { body: { isActive: false } })).status).toBe(200);
    expect((await org.core.request('PATCH', `/v1/master-wallets/${wallet.id}`, { body: { isActive: false } })).status).toBe(200);
    for (const [path, rule] of [
      [`/v1/addresses/${address.id}/settlement-rules`, ofAddress],
      [`/v1/master-wallets/${wallet.id}/settlement-rules`, ofWallet],
    ]) {
      const res = await org.core.request('GET', path);
      expect([path, res.status, res.body.data?.map((r: { id: string }) => r.id)]).toEqual([path, 200, [rule.id]]);
      expect((await other.core.request('GET', path)).status).toBe(404);
    }
  });

  test('installing, changing or re-activating a rule needs admin, as a wallet\'s autoSweep does; a write key may only stop one', async () => {
    const wallet = await createWallet(org, chain);
    const created = await org.core.post('/v1/api-keys', { name: 'writer', scopes: ['read', 'write'] });
    expect(created.status).toBe(201);
    const writer = org.core.with({ apiKey: created.body.data.secret, orgId: org.orgId });
    const body = { masterWalletId: wallet.id, name: 'divert', source: { blockchainId: chain }, destination: { blockchainId: chain, assetId: assets.ETH.id, address: randomAddress() } };
    const refused = await writer.post('/v1/settlement-rules', body);
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    const rule = (await org.core.post('/v1/settlement-rules', body)).body.data;
    expect((await writer.request('PATCH', `/v1/settlement-rules/${rule.id}`, { body: { name: 'changed' } })).status).toBe(403);
    expect((await writer.post(`/v1/settlement-rules/${rule.id}/deactivate`, {})).status).toBe(200);
    expect((await writer.post(`/v1/settlement-rules/${rule.id}/activate`, {})).status).toBe(403);
    expect((await writer.request('DELETE', `/v1/settlement-rules/${rule.id}`)).status).toBe(200);
  });

  test("Keel's settlement contract is no rule's destination: creating or changing a rule to it (any casing) is 422 VALIDATION_ERROR naming destination.address, after the admin scope; a rule that already holds it fails its execution for good and sends nothing", async () => {
    const deployments = t.keel.services.settlementDeployments;
    await deployments.ensureOnDevChain(t.keel.services.networks.get(chain)!);
    const contract = (await deployments.address(chain))!;
    const wallet = await createWallet(org, chain);
    const writer = org.core.with({ apiKey: (await org.core.post('/v1/api-keys', { name: 'writer', scopes: ['read', 'write'] })).body.data.secret, orgId: org.orgId });
    const body = (address: string, assetId = assets.USDC.id) => ({ masterWalletId: wallet.id, name: 'to trading?', source: { blockchainId: chain, assetIds: [assets.USDC.id] }, destination: { blockchainId: chain, assetId, address } });
    const refused = (res: { status: number; body: any }) => {
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'destination.address', error: 'INVALID_FIELD' }], settlementContract: contract } });
      expect(res.body.error.message).toMatch(/settlement contract.*trading\/deposits/);
    };
    expect((await writer.post('/v1/settlement-rules', body(contract))).status).toBe(403);
    refused(await org.core.post('/v1/settlement-rules', body(contract.toLowerCase())));
    refused(await org.core.post('/v1/settlement-rules', body(contract, assets.DAI.id)));
    const rule = await createRule(body(randomAddress()));
    refused(await org.core.request('PATCH', `/v1/settlement-rules/${rule.id}`, { body: { destination: { ...rule.destination, address: contract.toLowerCase() } } }));
    expect((await org.core.request('GET', `/v1/settlement-rules/${rule.id}`)).body.data.destination.address).toBe(rule.destination.address);

    // A rule stored with the contract before it was refused: its execution fails at once, for good.
    await t.keel.platform.db('settlement_rules').where({ id: rule.id }).update({ destinationAddress: contract.toLowerCase() });
    const held = await balanceOf('USDC', contract);
    await fund(t, org, chain, wallet.walletAddress, '1');
    await fund(t, org, chain, wallet.walletAddress, '25', 'USDC');
    const [failed] = await eventually(async () => {
      const list = await executions(rule.id);
      return list.length === 1 && list[0].status === 'FAILED' && list;
    }, 45_000);
    expect(failed).toMatchObject({ attempts: 1, transferId: null, nextAttemptAt: null, error: expect.stringMatching(/destination.address is Keel's settlement contract/) });
    expect(await balanceOf('USDC', contract)).toBe(held);
    expect(await balanceOf('USDC', wallet.walletAddress)).toBe(ethers.parseUnits('25', 6));
  });

  test('a rule\'s source.minAmount and maxAmount are strings, as the spec types them: "0" and "" (unbounded) when the rule sets none, the same over REST, GraphQL and in its events, and a rule read back is written back unchanged', async () => {
    const wallet = await createWallet(org, chain);
    const rule = await createRule({ masterWalletId: wallet.id, name: 'unbounded', source: { blockchainId: chain, assetIds: [assets.DAI.id] }, destination: { blockchainId: chain, assetId: assets.DAI.id, address: randomAddress() } });
    expect(rule.source).toEqual({ blockchainId: chain, assetIds: [assets.DAI.id], minAmount: '0', maxAmount: '' });
    expect((await org.core.request('GET', `/v1/settlement-rules/${rule.id}`)).body.data.source).toMatchObject({ minAmount: '0', maxAmount: '' });
    const gql = await org.core.request('POST', '/graphql', { body: { query: `{ settlementRule(id: "${rule.id}") { source { minAmount maxAmount } } }` } });
    expect(gql.body.data.settlementRule.source).toEqual({ minAmount: '0', maxAmount: '' });
    expect((await eventWhere('master_settlement_rule.created', (d) => d.ruleId === rule.id)).data.source).toMatchObject({ minAmount: '0', maxAmount: '' });

    // The source as read, sent back: the rule still matches every amount.
    const patched = await org.core.request('PATCH', `/v1/settlement-rules/${rule.id}`, { body: { source: rule.source } });
    expect(patched.status).toBe(200);
    expect(patched.body.data.source).toEqual(rule.source);
    const bounded = await org.core.request('PATCH', `/v1/settlement-rules/${rule.id}`, { body: { source: { ...rule.source, maxAmount: '250.50' } } });
    expect(bounded.body.data.source).toMatchObject({ minAmount: '0', maxAmount: '250.5' });
  });

  test('rules are validated: one chain, a known asset of it, an EVM destination, min at most max', async () => {
    const wallet = await createWallet(org, chain);
    const base = { masterWalletId: wallet.id, name: 'x', source: { blockchainId: chain }, destination: { blockchainId: chain, assetId: assets.ETH.id, address: randomAddress() } };
    const cases: [object, number, string][] = [
      [{ ...base, destination: { ...base.destination, address: '0x1234' } }, 400, 'INVALID_ADDRESS'],
      [{ ...base, source: { blockchainId: chain, minAmount: '10', maxAmount: '5' } }, 422, 'INVALID_FIELD'],
      [{ ...base, order: 'SOON' }, 422, 'INVALID_FIELD'],
      [{ ...base, slippageTolerance: '75' }, 422, 'INVALID_FIELD'],
      [{ ...base, addressId: wallet.id }, 422, 'INVALID_FIELD'],
    ];
    for (const [body, status, code] of cases) {
      const res = await org.core.request('POST', '/v1/settlement-rules', { body });
      expect([JSON.stringify(body).slice(0, 60), res.status, res.body.error?.code]).toEqual([JSON.stringify(body).slice(0, 60), status, code]);
    }
  });
});
