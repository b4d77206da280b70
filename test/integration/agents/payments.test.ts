import { ethers } from 'ethers';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { ApiClient } from '../../support/api-client';
import { eventually, WebhookReceiver } from '../../support/webhook-receiver';

const FAST = { RATE_LIMIT_SCALE: 100, CHAIN_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 100, WEBHOOKS_ALLOW_PRIVATE_URLS: true, OUTBOX_POLL_INTERVAL_MS: 20 };
const erc20 = new ethers.Interface(['function balanceOf(address) view returns (uint256)', 'event Transfer(address indexed from, address indexed to, uint256 value)']);

interface Asset {
  id: string;
  symbol: string;
  address: string;
}

const recipient = () => ethers.Wallet.createRandom().address;
const alice = recipient();
const bob = recipient();
const carol = recipient();
const mallory = recipient();

// The first address of the shipped OFAC snapshot's ETH list (data/sanctions), as the list writes it.
// Prices are Keel's own: USDC at par as a stablecoin; the dev chain's native coin has no trades, so no price.
const listed = '0x01e2919679362dFBC9ee1644Ba9C6da6D6245BB1';
const sanctioned = ethers.getAddress(listed);

let t: TestKeel;
let org: TestOrg;
let other: TestOrg;
let chainA: string;
let chainB: string;
let assets: Record<string, Asset>;
let provider: ethers.JsonRpcProvider;
let agent: { id: string; apiKey: string };
let agentClient: ApiClient;
let agentWallet: { id: string; addressWallet: { walletAddress: string } };
const receiver = new WebhookReceiver();

async function fund(address: string, amount: string, asset?: string) {
  const res = await org.core.post('/v1/dev/faucet', { blockchainId: chainA, address, amount, asset });
  expect(res.status).toBe(200);
  await eventually(async () => (await t.keel.platform.db('chain_transfers').where({ txHash: res.body.data.txHash, direction: 'incoming' }).first()) !== undefined, 30_000);
}

async function createAgent(name: string): Promise<{ id: string; apiKey: string; client: ApiClient }> {
  const res = await org.core.post('/v1/agents', { name });
  expect(res.status).toBe(201);
  return { ...res.body.data, client: org.core.with({ apiKey: res.body.data.apiKey, orgId: org.orgId }) };
}

async function pay(client: ApiClient, agentId: string, body: Record<string, unknown>) {
  const res = await client.post(`/v1/agents/${agentId}/payments`, body);
  expect([res.status, res.body.error]).toEqual([201, undefined]);
  return res.body.data;
}

const ruleOutcome = (payment: { policyEvaluation: { rules: { rule: string; outcome: string }[] } }, rule: string) => payment.policyEvaluation.rules.find((r) => r.rule === rule)?.outcome;

async function settled(agentId: string, paymentId: string) {
  return eventually(async () => {
    const res = await org.core.get(`/v1/agents/${agentId}/payments/${paymentId}`);
    return ['EXECUTED', 'FAILED'].includes(res.body.data.status) && res.body.data;
  }, 30_000);
}

const usdcOf = async (owner: string) => erc20.decodeFunctionResult('balanceOf', await provider.call({ to: assets.USDC.address, data: erc20.encodeFunctionData('balanceOf', [owner]) }))[0] as bigint;

beforeAll(async () => {
  t = await startTestKeel(FAST);
  org = await t.createOrg();
  other = await t.createOrg();
  [chainA, chainB] = (await org.core.get('/v1/blockchains')).body.data.map((c: { id: string }) => c.id);
  assets = Object.fromEntries((await org.core.get(`/v1/assets?blockchainId=${chainA}&limit=100`)).body.data.map((a: Asset) => [a.symbol, a]));
  provider = t.keel.services.networks.get(chainA)!.provider;

  const hook = await org.core.post('/v1/webhooks', { url: await receiver.start(), name: 'agent events', eventTypes: ['agent_payment.*'] });
  expect(hook.status).toBe(201);

  const master = (await org.core.post('/v1/master-wallets', { blockchainId: chainA, name: 'Agent funds' })).body.data;
  const created = await createAgent('Payer');
  agent = created;
  agentClient = created.client;
  agentWallet = (await org.core.post(`/v1/agents/${agent.id}/wallets/create`, { blockchainId: chainA, masterWalletId: master.id })).body.data;
  await fund(agentWallet.addressWallet.walletAddress, '1');
  await fund(agentWallet.addressWallet.walletAddress, '1000', 'USDC');
});
afterAll(async () => {
  await receiver.stop();
  await t?.stop();
});

const usdc = (to: string, amount: string, extra: Record<string, unknown> = {}) => ({ agentWalletId: agentWallet.id, assetId: assets.USDC.id, recipient: to, amount, ...extra });

describe('agent payments', () => {
  test('default deny: without a policy a payment is recorded as POLICY_DENIED and nothing is sent', async () => {
    const p = await pay(agentClient, agent.id, usdc(alice, '1'));
    expect(p).toMatchObject({ status: 'POLICY_DENIED', kind: 'TRANSFER', agentId: agent.id, agentWalletId: agentWallet.id, recipient: alice, amount: '1', amountUsd: '1', policyId: null, transferId: null, waasTxHash: null });
    expect(p.denialReason).toMatch(/no policy/);
    expect(p.policyEvaluation).toMatchObject({ decision: 'DENY', rules: [{ rule: 'policy_exists', outcome: 'FAIL' }] });

    const set = await org.core.put(`/v1/agents/${agent.id}/policy`, {
      allowedBlockchainIds: [chainA],
      allowedAssetIds: [assets.USDC.id, assets.ETH.id],
      allowedRecipients: [alice, bob, mallory, sanctioned],
      deniedRecipients: [mallory],
      assetLimits: [{ assetId: assets.USDC.id, maxPerPayment: '50', maxPerWindow: '500', approvalAbove: '30' }],
      maxPerPaymentUsd: '45',
    });
    expect(set.status).toBe(200);
  });

  test('an allowed payment is sent on the dev chain: APPROVED, SUBMITTED, then EXECUTED with its transaction hash', async () => {
    const p = await pay(agentClient, agent.id, usdc(alice, '5'));
    expect(p).toMatchObject({ status: 'APPROVED', amount: '5', amountUsd: '5', denialReason: null });
    expect(p.policyEvaluation.decision).toBe('ALLOW');
    expect(p.transferId).toEqual(expect.any(String));

    const done = await settled(agent.id, p.id);
    expect(done.status).toBe('EXECUTED');
    expect(done.executedAt).not.toBeNull();
    const receipt = await provider.getTransactionReceipt(done.waasTxHash);
    expect(receipt!.status).toBe(1);
    expect(receipt!.from).toBe(agentWallet.addressWallet.walletAddress);
    const log = erc20.parseLog(receipt!.logs[0])!;
    expect([log.args.to, log.args.value]).toEqual([alice, 5_000_000n]);
    expect(await usdcOf(alice)).toBe(5_000_000n);
    // It went through the withdrawal machinery: a transfer of kind agent_payment, the same hash.
    const transfer = (await org.core.get(`/v1/transfers/${p.transferId}`)).body.data;
    expect(transfer).toMatchObject({ kind: 'agent_payment', status: 'CONFIRMED', fromAddress: agentWallet.addressWallet.walletAddress });
    expect(transfer.items[0].txHash).toBe(done.waasTxHash);

    // Every transition was announced, with the payment in its data, to the webhook receiver.
    const delivered = await eventually(() => {
      const mine = receiver.requests.map((r) => JSON.parse(r.body)).filter((e) => e.data.payment?.id === p.id);
      return mine.length >= 3 && mine;
    }, 20_000);
    expect(delivered.map((e) => e.type)).toEqual(['agent_payment.approved', 'agent_payment.submitted', 'agent_payment.executed']);
    expect(delivered[1].data.payment).toMatchObject({ status: 'SUBMITTED', waasTxHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(delivered[2].data.payment).toMatchObject({ status: 'EXECUTED', waasTxHash: done.waasTxHash, amount: '5', recipient: alice });
  });

  test('each rule of the policy can deny, and the evaluation records why', async () => {
    const cases: [string, Record<string, unknown>, string, RegExp][] = [
      ['recipient not on the allow list', usdc(carol, '1'), 'recipient_allowed', /not in allowedRecipients/],
      ['recipient on the deny list', usdc(mallory, '1'), 'recipient_not_denied', /is in deniedRecipients/],
      ['asset not allowed', { ...usdc(alice, '1'), assetId: assets.DAI.id }, 'asset_allowed', /DAI .* is not in allowedAssetIds/],
      ['per-payment limit in asset units', usdc(alice, '51'), 'per_payment_asset_limit', /51 USDC exceeds the per-payment limit of 50 USDC/],
      ['per-payment limit in USD', usdc(alice, '46'), 'per_payment_usd_limit', /46 USD exceeds the per-payment limit of 45 USD/],
      ['no trustworthy USD price for a USD rule', { ...usdc(alice, '0.01'), assetId: assets.ETH.id }, 'usd_value_known', /^no trustworthy USD price for ETH: .*so the payment is denied$/],
    ];
    // A denied payment costs no withdrawal checks (they read the chain): the policy decides first.
    const prepare = jest.spyOn(t.keel.services.transfers, 'prepare');
    try {
      for (const [what, body, rule, reason] of cases) {
        const p = await pay(agentClient, agent.id, body);
        expect([what, p.status, ruleOutcome(p, rule)]).toEqual([what, 'POLICY_DENIED', 'FAIL']);
        expect(p.denialReason).toMatch(reason);
        expect(p.transferId).toBeNull();
      }
      expect(prepare).not.toHaveBeenCalled();
    } finally {
      prepare.mockRestore();
    }
    // ETH has no price (none configured, no trade on the order book): the payment shows none rather than an invented one.
    const eth = (await agentClient.get(`/v1/agents/${agent.id}/payments?status=POLICY_DENIED&limit=1`)).body.data[0];
    expect([eth.assetId, eth.amountUsd]).toEqual([assets.ETH.id, null]);
  });

  test('a sanctioned recipient is refused through the screen, even when the policy lists it', async () => {
    const p = await pay(agentClient, agent.id, usdc(sanctioned, '1'));
    expect(p.status).toBe('POLICY_DENIED');
    expect(ruleOutcome(p, 'recipient_allowed')).toBe('PASS');
    expect(ruleOutcome(p, 'recipient_not_sanctioned')).toBe('FAIL');
    expect(p.denialReason).toBe(`recipient ${sanctioned} is on a sanctions list (ETH)`);
    expect(p.policyEvaluation.screening).toMatchObject({ sanctioned: true, matches: [{ list: 'ETH', address: listed }] });
  });

  test('above the approval threshold a payment waits; an admin approves it (sent) or rejects it (denied)', async () => {
    const held = await pay(agentClient, agent.id, usdc(bob, '35'));
    expect(held).toMatchObject({ status: 'PENDING', transferId: null, denialReason: null });
    expect(held.policyEvaluation.decision).toBe('REQUIRE_APPROVAL');
    expect(ruleOutcome(held, 'approval_threshold')).toBe('HOLD');

    // Neither the agent nor another organisation may decide it.
    expect((await agentClient.post(`/v1/agents/${agent.id}/payments/${held.id}/approve`)).status).toBe(403);
    expect((await other.core.post(`/v1/agents/${agent.id}/payments/${held.id}/approve`)).status).toBe(404);
    const writer = org.core.with({ apiKey: (await org.core.post('/v1/api-keys', { name: 'w', scopes: ['read', 'write'] })).body.data.secret, orgId: org.orgId });
    expect((await writer.post(`/v1/agents/${agent.id}/payments/${held.id}/approve`)).status).toBe(403);

    const approved = await org.core.post(`/v1/agents/${agent.id}/payments/${held.id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body.data).toMatchObject({ status: 'APPROVED', decidedAt: expect.any(String) });
    expect(approved.body.data.policyEvaluation.approval).toMatchObject({ decision: 'APPROVED' });
    const done = await settled(agent.id, held.id);
    expect(done.status).toBe('EXECUTED');
    expect(await usdcOf(bob)).toBe(35_000_000n);
    expect((await org.core.post(`/v1/agents/${agent.id}/payments/${held.id}/approve`)).status).toBe(409);

    const refused = await pay(agentClient, agent.id, usdc(bob, '31'));
    expect(refused.status).toBe('PENDING');
    const rejected = await org.core.post(`/v1/agents/${agent.id}/payments/${refused.id}/reject`, { reason: 'not this week' });
    expect(rejected.body.data).toMatchObject({ status: 'POLICY_DENIED', denialReason: 'Rejected by an administrator: not this week', transferId: null });
    expect(rejected.body.data.policyEvaluation.approval).toMatchObject({ decision: 'REJECTED', reason: 'not this week' });
    expect(await usdcOf(bob)).toBe(35_000_000n);
  });

  test("approving a held payment evaluates the agent's policy again against what the window has let go: of two held payments that fit the window only one at a time, the first approved is sent and the second is POLICY_DENIED naming the window", async () => {
    const { id, client } = await createAgent('Approved twice');
    const wallet = (await org.core.post(`/v1/agents/${id}/wallets/create`, { blockchainId: chainA })).body.data;
    await fund(wallet.addressWallet.walletAddress, '0.1');
    await fund(wallet.addressWallet.walletAddress, '20', 'USDC');
    await org.core.put(`/v1/agents/${id}/policy`, { allowedBlockchainIds: [chainA], allowedAssetIds: [assets.USDC.id], allowAnyRecipient: true, assetLimits: [{ assetId: assets.USDC.id, maxPerWindow: '10', approvalAbove: '0' }] });
    const payee = recipient();
    const body = (amount: string) => ({ agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: payee, amount });
    const first = await pay(client, id, body('6'));
    // Held since the day before yesterday: its request has left the 86400s window, where it no longer holds room.
    await t.keel.platform.db('agent_payments').where({ id: first.id }).update({ createdAt: new Date(Date.now() - 2 * 86_400_000) });
    const second = await pay(client, id, body('6'));
    expect([first.status, second.status]).toEqual(['PENDING', 'PENDING']);

    // The other held payment takes no room from the approval: it is checked again when it is approved itself.
    const sent = (await org.core.post(`/v1/agents/${id}/payments/${first.id}/approve`)).body.data;
    expect(sent).toMatchObject({ status: 'APPROVED', denialReason: null, transferId: expect.any(String) });
    expect(sent.policyEvaluation.approval).toMatchObject({ decision: 'APPROVED', evaluation: { decision: 'ALLOW', policyVersion: 1 } });
    expect(ruleOutcome({ policyEvaluation: sent.policyEvaluation.approval.evaluation }, 'approval_threshold')).toBe('PASS');
    expect((await settled(id, first.id)).status).toBe('EXECUTED');

    // Approved now, the first counts from its approval: the second no longer fits.
    const approve = await org.core.post(`/v1/agents/${id}/payments/${second.id}/approve`);
    expect(approve.status).toBe(200);
    expect(approve.body.data).toMatchObject({ status: 'POLICY_DENIED', transferId: null, decidedAt: expect.any(String) });
    expect(approve.body.data.denialReason).toBe('12 USDC over the last 86400s with this payment exceeds the limit of 10 USDC');
    expect(approve.body.data.policyEvaluation).toMatchObject({ decision: 'REQUIRE_APPROVAL', approval: { decision: 'DENIED', evaluation: { decision: 'DENY', denialReason: approve.body.data.denialReason } } });
    expect(ruleOutcome({ policyEvaluation: approve.body.data.policyEvaluation.approval.evaluation }, 'window_asset_limit')).toBe('FAIL');
    const announced = await eventually(() => receiver.requests.map((r) => JSON.parse(r.body)).find((e) => e.data.payment?.id === second.id && e.type !== 'agent_payment.pending_approval'), 20_000);
    expect(announced).toMatchObject({ type: 'agent_payment.policy_denied', data: { payment: { status: 'POLICY_DENIED', denialReason: approve.body.data.denialReason } } });
    expect(await usdcOf(payee)).toBe(6_000_000n);
  });

  test('two approvals at once are decided one at a time, under the lock of the agent: only one fits the window', async () => {
    const { id, client } = await createAgent('Approved at once');
    const wallet = (await org.core.post(`/v1/agents/${id}/wallets/create`, { blockchainId: chainA })).body.data;
    await fund(wallet.addressWallet.walletAddress, '0.1');
    await fund(wallet.addressWallet.walletAddress, '20', 'USDC');
    await org.core.put(`/v1/agents/${id}/policy`, { allowedBlockchainIds: [chainA], allowedAssetIds: [assets.USDC.id], allowAnyRecipient: true, assetLimits: [{ assetId: assets.USDC.id, maxPerWindow: '10', approvalAbove: '0' }] });
    const body = { agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: recipient(), amount: '6' };
    const first = await pay(client, id, body);
    await t.keel.platform.db('agent_payments').where({ id: first.id }).update({ createdAt: new Date(Date.now() - 2 * 86_400_000) });
    const second = await pay(client, id, body);
    const decided = await Promise.all([first, second].map((p) => org.core.post(`/v1/agents/${id}/payments/${p.id}/approve`)));
    expect(decided.map((r) => r.status)).toEqual([200, 200]);
    expect(decided.map((r) => r.body.data.status).sort()).toEqual(['APPROVED', 'POLICY_DENIED']);
    expect(decided.find((r) => r.body.data.status === 'POLICY_DENIED')!.body.data.denialReason).toMatch(/12 USDC over the last 86400s/);
  });

  test('a payment held under a policy tightened since is POLICY_DENIED when approved, with the reason of the policy as it is now', async () => {
    const { id, client } = await createAgent('Tightened');
    const wallet = (await org.core.post(`/v1/agents/${id}/wallets/create`, { blockchainId: chainA })).body.data;
    const policy = (over: Record<string, unknown>) => ({ allowedBlockchainIds: [chainA], allowedAssetIds: [assets.USDC.id], allowAnyRecipient: true, assetLimits: [{ assetId: assets.USDC.id, maxPerPayment: '10', approvalAbove: '0' }], ...over });
    await org.core.put(`/v1/agents/${id}/policy`, policy({}));
    const body = (amount: string) => ({ agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: bob, amount });
    const large = await pay(client, id, body('8'));
    const anyone = await pay(client, id, body('1'));
    expect([large.status, anyone.status]).toEqual(['PENDING', 'PENDING']);

    await org.core.put(`/v1/agents/${id}/policy`, policy({ assetLimits: [{ assetId: assets.USDC.id, maxPerPayment: '5', approvalAbove: '0' }] }));
    const refused = (await org.core.post(`/v1/agents/${id}/payments/${large.id}/approve`)).body.data;
    expect(refused).toMatchObject({ status: 'POLICY_DENIED', denialReason: '8 USDC exceeds the per-payment limit of 5 USDC', transferId: null });
    expect(refused.policyEvaluation).toMatchObject({ policyVersion: 1, approval: { decision: 'DENIED', evaluation: { decision: 'DENY', policyVersion: 2 } } });

    await org.core.put(`/v1/agents/${id}/policy`, policy({ allowAnyRecipient: false, allowedRecipients: [alice] }));
    const unlisted = (await org.core.post(`/v1/agents/${id}/payments/${anyone.id}/approve`)).body.data;
    expect(unlisted).toMatchObject({ status: 'POLICY_DENIED', denialReason: `recipient ${bob} is not in allowedRecipients`, transferId: null });
  });

  test("a payment the master wallet holds for approval (requireApprovalForTransfers) waits there, and fails when that transfer is rejected", async () => {
    const { id, client } = await createAgent('Doubly approved');
    const master = (await org.core.post('/v1/master-wallets', { blockchainId: chainA, name: 'Guarded', configurations: { security: { requireApprovalForTransfers: true } } })).body.data;
    const wallet = (await org.core.post(`/v1/agents/${id}/wallets/create`, { blockchainId: chainA, masterWalletId: master.id })).body.data;
    await fund(wallet.addressWallet.walletAddress, '0.1');
    await fund(wallet.addressWallet.walletAddress, '10', 'USDC');
    await org.core.put(`/v1/agents/${id}/policy`, { allowedBlockchainIds: [chainA], allowedAssetIds: [assets.USDC.id], allowAnyRecipient: true });
    const p = await pay(client, id, { agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: carol, amount: '3' });
    expect(p.status).toBe('APPROVED');
    const transfer = (await org.core.get(`/v1/transfers/${p.transferId}`)).body.data;
    expect(transfer).toMatchObject({ kind: 'agent_payment', status: 'PENDING_APPROVAL' });
    expect((await org.core.post(`/v1/transfers/${p.transferId}/reject`)).status).toBe(200);
    const failed = (await org.core.get(`/v1/agents/${id}/payments/${p.id}`)).body.data;
    expect(failed).toMatchObject({ status: 'FAILED', waasTxHash: null, failureReason: expect.stringMatching(/rejected/) });
    expect(await usdcOf(carol)).toBe(0n);

    // A suspended agent's held payments cannot be approved until it is resumed.
    await org.core.put(`/v1/agents/${id}/policy`, { allowedBlockchainIds: [chainA], allowedAssetIds: [assets.USDC.id], allowAnyRecipient: true, approvalAboveUsd: '0' });
    const held = await pay(client, id, { agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: carol, amount: '1' });
    expect(held.status).toBe('PENDING');
    await org.core.post(`/v1/agents/${id}/suspend`);
    const refused = await org.core.post(`/v1/agents/${id}/payments/${held.id}/approve`);
    expect([refused.status, refused.body.error.code]).toEqual([409, 'CONFLICT']);
  });

  test('under enableGaslessWithdraw a payment from an agent address holding no native coin gets its gas from the master wallet first, waits for it, and is EXECUTED', async () => {
    const { id, client } = await createAgent('Gasless');
    const master = (await org.core.post('/v1/master-wallets', { blockchainId: chainA, name: 'Gasless agent funds', configurations: { enableGaslessWithdraw: true } })).body.data;
    const wallet = (await org.core.post(`/v1/agents/${id}/wallets/create`, { blockchainId: chainA, masterWalletId: master.id })).body.data;
    await fund(master.walletAddress, '1');
    await fund(wallet.addressWallet.walletAddress, '10', 'USDC');
    expect(await provider.getBalance(wallet.addressWallet.walletAddress)).toBe(0n);
    await org.core.put(`/v1/agents/${id}/policy`, { allowedBlockchainIds: [chainA], allowedAssetIds: [assets.USDC.id], allowAnyRecipient: true });
    const payee = recipient();

    const p = await pay(client, id, { agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: payee, amount: '3' });
    expect(p.status).toBe('APPROVED');
    const topUp = (await org.core.get(`/v1/transfers?masterWalletId=${master.id}`)).body.data.find((x: { kind: string }) => x.kind === 'gas_topup');
    expect(topUp).toMatchObject({ fromAddress: master.walletAddress, addressId: null, items: [{ recipient: wallet.addressWallet.walletAddress, asset: { symbol: 'ETH' } }] });
    const done = await settled(id, p.id);
    expect(done).toMatchObject({ status: 'EXECUTED', failureReason: null });
    expect(await usdcOf(payee)).toBe(3_000_000n);
    // Sent once its gas had arrived: mined after the top-up.
    const paid = (await org.core.get(`/v1/transfers/${topUp.id}`)).body.data;
    expect(paid.status).toBe('CONFIRMED');
    expect((await provider.getTransactionReceipt(done.waasTxHash))!.blockNumber).toBeGreaterThan(Number(paid.items[0].blockNumber));
  });

  test("a payment from an address holding a deposit from a sanctioned address, not released, waits for an administrator: nothing leaves a held address automatically", async () => {
    const { id, client } = await createAgent('Tainted');
    const master = (await org.core.post('/v1/master-wallets', { blockchainId: chainA, name: 'Tainted agent funds' })).body.data;
    const wallet = (await org.core.post(`/v1/agents/${id}/wallets/create`, { blockchainId: chainA, masterWalletId: master.id })).body.data;
    await fund(wallet.addressWallet.walletAddress, '0.1');
    await fund(wallet.addressWallet.walletAddress, '10', 'USDC');
    await org.core.put(`/v1/agents/${id}/policy`, { allowedBlockchainIds: [chainA], allowedAssetIds: [assets.USDC.id], allowAnyRecipient: true });
    // The USDC deposit as the deposit watcher flags one from a sanctioned sender.
    const deposit = await t.keel.platform.db('chain_transfers').where({ addressId: wallet.addressId, direction: 'incoming', assetId: assets.USDC.id }).first('id');
    await t.keel.platform.db('chain_transfers').where({ id: deposit.id }).update({ amlFlaggedAt: new Date(), amlMatches: JSON.stringify([{ list: 'TEST', address: listed }]) });
    const payee = recipient();

    const held = await pay(client, id, { agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: payee, amount: '2' });
    expect(held).toMatchObject({ status: 'PENDING', transferId: null });
    expect(held.policyEvaluation.decision).toBe('REQUIRE_APPROVAL');
    expect(ruleOutcome(held, 'source_not_aml_held')).toBe('HOLD');
    expect(held.policyEvaluation.rules.find((r: { rule: string }) => r.rule === 'source_not_aml_held').detail).toMatch(/sanctioned address not released yet/);
    expect(await usdcOf(payee)).toBe(0n);

    // An administrator's approval is the review: the payment goes.
    const approved = await org.core.post(`/v1/agents/${id}/payments/${held.id}/approve`);
    expect(approved.body.data).toMatchObject({ status: 'APPROVED' });
    expect((await settled(id, held.id)).status).toBe('EXECUTED');
    expect(await usdcOf(payee)).toBe(2_000_000n);

    // Once the deposit is released, the agent pays on its own again.
    expect((await pay(client, id, { agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: payee, amount: '1' })).status).toBe('PENDING');
    expect((await org.core.post(`/v1/aml/flagged-transfers/${deposit.id}/release`, { note: 'reviewed' })).status).toBe(200);
    const free = await pay(client, id, { agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: payee, amount: '1' });
    expect(free.status).toBe('APPROVED');
    expect(ruleOutcome(free, 'source_not_aml_held')).toBe('PASS');
  });

  test("a payment the policy allows but the withdrawal checks refuse (no funds on chain or in the ledger, outside the master wallet's allowedRecipients) is recorded FAILED with the reason and its evaluation, and announced", async () => {
    const { id, client } = await createAgent('Underfunded');
    const master = (await org.core.post('/v1/master-wallets', { blockchainId: chainA, name: 'Strict', configurations: { security: { allowedRecipients: [alice] } } })).body.data;
    const wallet = (await org.core.post(`/v1/agents/${id}/wallets/create`, { blockchainId: chainA, masterWalletId: master.id })).body.data;
    await fund(wallet.addressWallet.walletAddress, '0.1');
    await fund(wallet.addressWallet.walletAddress, '2', 'USDC');
    await org.core.put(`/v1/agents/${id}/policy`, { allowedBlockchainIds: [chainA], allowedAssetIds: [assets.USDC.id], allowAnyRecipient: true });
    const broke = await pay(client, id, { agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: alice, amount: '3' });
    expect(broke).toMatchObject({ status: 'FAILED', transferId: null, failureReason: expect.stringMatching(/withdrawal checks.*USDC/) });
    expect(broke.policyEvaluation.decision).toBe('ALLOW');
    const outside = await pay(client, id, { agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: carol, amount: '1' });
    expect(outside).toMatchObject({ status: 'FAILED', transferId: null, failureReason: expect.stringMatching(/allowedRecipients/) });
    // The chain holds it, the custody ledger does not (here: 1.5 of the 2 USDC taken by hand, as a debt would): the reservation refuses.
    await t.keel.platform.db.transaction((trx) => t.keel.services.ledger.debit(trx, { organizationId: org.orgId, walletId: wallet.addressId, assetId: assets.USDC.id, amount: 1_500_000n, reference: 'test:ledger-short', account: 'custody' }));
    const short = await pay(client, id, { agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: alice, amount: '1' });
    expect(short).toMatchObject({ status: 'FAILED', transferId: null, failureReason: expect.stringMatching(/withdrawal checks/) });
    const announced = await eventually(() => {
      const mine = receiver.requests.map((r) => JSON.parse(r.body)).filter((e) => [broke.id, outside.id, short.id].includes(e.data.payment?.id));
      return mine.length >= 3 && mine;
    }, 20_000);
    expect(announced.map((e) => e.type)).toEqual(['agent_payment.failed', 'agent_payment.failed', 'agent_payment.failed']);
    expect(await usdcOf(carol)).toBe(0n);
  });

  test('rolling-window limits count what is pending and sent, in asset units and in USD; chain allow list', async () => {
    const { id, client } = await createAgent('Windowed');
    const wallet = (await org.core.post(`/v1/agents/${id}/wallets/create`, { blockchainId: chainA })).body.data;
    const body = (amount: string) => ({ agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: alice, amount });
    // Everything above 0 is held for approval, so nothing is sent and no funds are needed.
    await org.core.put(`/v1/agents/${id}/policy`, { allowedBlockchainIds: [chainA], allowedAssetIds: [assets.USDC.id], allowAnyRecipient: true, assetLimits: [{ assetId: assets.USDC.id, maxPerWindow: '10', approvalAbove: '0' }] });
    expect((await pay(client, id, body('6'))).status).toBe('PENDING');
    const overAsset = await pay(client, id, body('5'));
    expect([overAsset.status, ruleOutcome(overAsset, 'window_asset_limit')]).toEqual(['POLICY_DENIED', 'FAIL']);
    expect(overAsset.denialReason).toMatch(/11 USDC over the last 86400s with this payment exceeds the limit of 10 USDC/);
    expect((await pay(client, id, body('4'))).status).toBe('PENDING');

    await org.core.put(`/v1/agents/${id}/policy`, { allowedBlockchainIds: [chainA], allowedAssetIds: [assets.USDC.id], allowAnyRecipient: true, maxPerWindowUsd: '12', approvalAboveUsd: '0' });
    const overUsd = await pay(client, id, body('2.5'));
    expect([overUsd.status, ruleOutcome(overUsd, 'window_usd_limit')]).toEqual(['POLICY_DENIED', 'FAIL']);
    expect(overUsd.denialReason).toMatch(/12.5 USD over the last 86400s/);
    expect((await pay(client, id, body('2'))).status).toBe('PENDING');

    await org.core.put(`/v1/agents/${id}/policy`, { allowedBlockchainIds: [chainB], allowedAssetIds: [assets.USDC.id], allowAnyRecipient: true });
    const wrongChain = await pay(client, id, body('1'));
    expect([wrongChain.status, ruleOutcome(wrongChain, 'blockchain_allowed')]).toEqual(['POLICY_DENIED', 'FAIL']);
    // Every evaluation names the policy version it applied.
    expect(wrongChain.policyEvaluation.policyVersion).toBe(3);
  });

  test('concurrent requests of one agent are evaluated one at a time: only what fits the window is accepted', async () => {
    const { id, client } = await createAgent('Concurrent');
    const wallet = (await org.core.post(`/v1/agents/${id}/wallets/create`, { blockchainId: chainA })).body.data;
    await org.core.put(`/v1/agents/${id}/policy`, { allowedBlockchainIds: [chainA], allowedAssetIds: [assets.USDC.id], allowAnyRecipient: true, assetLimits: [{ assetId: assets.USDC.id, maxPerWindow: '10', approvalAbove: '0' }] });
    const results = await Promise.all(Array.from({ length: 6 }, () => client.post(`/v1/agents/${id}/payments`, { agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: alice, amount: '3' })));
    expect(results.map((r) => r.status)).toEqual(Array(6).fill(201));
    const statuses = results.map((r) => r.body.data.status).sort();
    expect(statuses).toEqual(['PENDING', 'PENDING', 'PENDING', 'POLICY_DENIED', 'POLICY_DENIED', 'POLICY_DENIED']);
    // The same idempotency key sent at once by several requests makes one payment.
    const same = await Promise.all(Array.from({ length: 4 }, () => client.post(`/v1/agents/${id}/payments`, { agentWalletId: wallet.id, assetId: assets.USDC.id, recipient: alice, amount: '1', idempotencyKey: 'once' })));
    expect(new Set(same.map((r) => r.body.data.id)).size).toBe(1);
  });

  test('idempotencyKey: the same request returns the first payment; a different one with the key is 409', async () => {
    const first = await pay(agentClient, agent.id, usdc(alice, '1', { idempotencyKey: 'order-42' }));
    const again = await pay(agentClient, agent.id, usdc(alice, '1', { idempotencyKey: 'order-42' }));
    expect(again.id).toBe(first.id);
    const different = await agentClient.post(`/v1/agents/${agent.id}/payments`, usdc(alice, '2', { idempotencyKey: 'order-42' }));
    expect([different.status, different.body.error.code]).toEqual([409, 'CONFLICT']);
    expect((await t.keel.platform.db('agent_payments').where({ agentId: agent.id, idempotencyKey: 'order-42' })).length).toBe(1);
    expect((await settled(agent.id, first.id)).status).toBe('EXECUTED');
  });

  test('the same operations over GraphQL: the agent requests and reads, an admin decides', async () => {
    const request = await agentClient.graphql(
      'mutation($a: ID!, $i: RequestAgentPaymentInput!) { requestAgentPayment(agentId: $a, input: $i) { id status amountUsd policyEvaluation denialReason } }',
      { a: agent.id, i: usdc(carol, '2') },
    );
    expect(request.body.data.requestAgentPayment).toMatchObject({ status: 'POLICY_DENIED', amountUsd: '2', denialReason: expect.stringMatching(/not in allowedRecipients/) });
    const read = await agentClient.graphql('query($a: ID!) { agent(id: $a) { id status apiKeyPrefix } agentPayments(agentId: $a, status: POLICY_DENIED, limit: 1) { total items { id } } }', { a: agent.id });
    expect(read.body.data.agent).toMatchObject({ id: agent.id, status: 'ACTIVE' });
    expect(read.body.data.agentPayments.items[0].id).toBe(request.body.data.requestAgentPayment.id);
    const forbidden = await agentClient.graphql('mutation($a: ID!, $p: ID!) { approveAgentPayment(agentId: $a, id: $p) { id } }', { a: agent.id, p: request.body.data.requestAgentPayment.id });
    expect(forbidden.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const conflict = await org.core.graphql('mutation($a: ID!, $p: ID!) { approveAgentPayment(agentId: $a, id: $p) { id } }', { a: agent.id, p: request.body.data.requestAgentPayment.id });
    expect(conflict.body.errors[0].extensions.code).toBe('CONFLICT');
  });

  test('bad requests are refused before any evaluation: unknown wallet, asset or address', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [usdc(alice, '1', { agentWalletId: '00000000-0000-4000-8000-000000000000' }), 404, 'NOT_FOUND'],
      [usdc(alice, '1', { assetId: 'nope' }), 422, 'INVALID_FIELD'],
      [usdc('0x1234', '1'), 400, 'INVALID_ADDRESS'],
      [usdc(alice, '-1'), 422, 'INVALID_FIELD'],
      [usdc(alice, '1.0000001'), 422, 'INVALID_FIELD'],
      [{ ...usdc(alice, '1'), assetId: (await org.core.get(`/v1/assets?blockchainId=${chainB}&symbol=USDC`)).body.data[0].id }, 400, 'INVALID_NETWORK'],
    ];
    const before = (await org.core.get(`/v1/agents/${agent.id}/payments?limit=1`)).body.total;
    for (const [body, status, code] of cases) {
      const r = await agentClient.post(`/v1/agents/${agent.id}/payments`, body);
      expect([r.status, r.body.error?.code]).toEqual([status, code]);
    }
    expect((await org.core.get(`/v1/agents/${agent.id}/payments?limit=1`)).body.total).toBe(before);
  });

  test('the list filters by status, wallet and date range, and sorts either way', async () => {
    const all = (await org.core.get(`/v1/agents/${agent.id}/payments?limit=100`)).body;
    expect(all.total).toBeGreaterThan(8);
    const times = all.data.map((p: { createdAt: string }) => p.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    const asc = (await agentClient.get(`/v1/agents/${agent.id}/payments?limit=100&sort=ASC`)).body.data.map((p: { id: string }) => p.id);
    expect(asc).toEqual(all.data.map((p: { id: string }) => p.id).reverse());

    const denied = (await agentClient.get(`/v1/agents/${agent.id}/payments?status=POLICY_DENIED&limit=100`)).body;
    expect(denied.total).toBe(all.data.filter((p: { status: string }) => p.status === 'POLICY_DENIED').length);
    expect(denied.data.every((p: { status: string }) => p.status === 'POLICY_DENIED')).toBe(true);

    const oldest = all.data[all.data.length - 1];
    const upTo = (await org.core.get(`/v1/agents/${agent.id}/payments?to=${encodeURIComponent(oldest.createdAt)}`)).body;
    expect(upTo.data.map((p: { id: string }) => p.id)).toEqual([oldest.id]);
    const from = (await org.core.get(`/v1/agents/${agent.id}/payments?from=${encodeURIComponent(all.data[0].createdAt)}`)).body;
    expect(from.data[0].id).toBe(all.data[0].id);

    expect((await org.core.get(`/v1/agents/${agent.id}/payments?agentWalletId=${agentWallet.id}&limit=1`)).body.total).toBe(all.total);
    expect((await org.core.get(`/v1/agents/${agent.id}/payments?agentWalletId=00000000-0000-4000-8000-000000000000`)).body.total).toBe(0);
    for (const bad of ['status=DONE', 'sort=UP', 'agentWalletId=x']) expect((await org.core.get(`/v1/agents/${agent.id}/payments?${bad}`)).status).toBe(422);
    // Another organisation sees none of it.
    expect((await other.core.get(`/v1/agents/${agent.id}/payments/${oldest.id}`)).status).toBe(404);
  });
});
