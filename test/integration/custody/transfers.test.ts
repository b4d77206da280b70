import { ethers } from 'ethers';
import { anotherAdmin, TestKeel, TestOrg } from '../../support/keel';
import { useTestKeel } from '../../support/use-test-keel';
import { eventually } from '../../support/eventually';
import type { DevChain } from '../../../src/platform/chain/devchain';
import { rpc } from '../../../src/platform/chain/json-rpc';
import { mine, setAutomine } from '../../support/chain-controls';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { TransactionSender } from '../../../src/modules/withdrawals/transaction-sender';

const FAST = { RATE_LIMIT_SCALE: 100, CHAIN_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 100 };
const erc20 = new ethers.Interface(['function balanceOf(address) view returns (uint256)']);

interface Asset {
  id: string;
  symbol: string;
  address: string;
  blockchainId: string;
}

async function assetsOf(org: TestOrg, blockchainId: string): Promise<Record<string, Asset>> {
  const res = await org.core.request('GET', `/v1/assets?blockchainId=${blockchainId}&limit=100`);
  return Object.fromEntries(res.body.data.map((a: Asset) => [a.symbol, a]));
}

async function createWallet(org: TestOrg, blockchainId: string, configurations?: object) {
  const res = await org.core.request('POST', '/v1/master-wallets', { body: { blockchainId, name: 'Payouts', configurations } });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; walletAddress: string };
}

let keelUnderTest: TestKeel;

/** Funds from the faucet and waits until the deposit is confirmed (and so credited): only then is it spendable. */
async function fund(org: TestOrg, blockchainId: string, address: string, amount: string, asset?: string) {
  const res = await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId, address, amount, asset } });
  expect(res.status).toBe(200);
  await eventually(async () => (await keelUnderTest.keel.platform.db('chain_transfers').where({ txHash: res.body.data.txHash, direction: 'incoming' }).first()) !== undefined, 30_000);
}

const recipient = () => ethers.Wallet.createRandom().address;

async function settled(org: TestOrg, transferId: string) {
  return eventually(async () => {
    const res = await org.core.request('GET', `/v1/transfers/${transferId}`);
    // Twenty of these polling at once can spend the organisation's rate limit: a 429 is polled again.
    if (res.status === 429) return false;
    expect(res.status).toBe(200);
    return ['CONFIRMED', 'FAILED', 'REJECTED'].includes(res.body.data.status) && res.body.data;
  }, 30_000, 200);
}

describe('transfers on the shared dev chains', () => {
  let org: TestOrg;
  let other: TestOrg;
  let chainA: string;
  let chainB: string;
  let assets: Record<string, Asset>;
  let provider: ethers.JsonRpcProvider;

  const { t } = useTestKeel(FAST);
  beforeAll(async () => {
    keelUnderTest = t;
    org = await t.createOrg();
    other = await t.createOrg();
    const chains = (await org.core.request('GET', '/v1/blockchains')).body.data;
    [chainA, chainB] = chains.map((c: { id: string }) => c.id);
    assets = await assetsOf(org, chainA);
    provider = t.keel.services.networks.get(chainA)!.provider;
  });

  const balanceOf = async (symbol: string, owner: string) =>
    symbol === 'ETH' ? provider.getBalance(owner) : (erc20.decodeFunctionResult('balanceOf', await provider.call({ to: assets[symbol].address, data: erc20.encodeFunctionData('balanceOf', [owner]) }))[0] as bigint);

  test('sends a token and the native coin to two recipients, each line one confirmed transaction, and reports master.transfer_executed', async () => {
    const wallet = await createWallet(org, chainA);
    await fund(org, chainA, wallet.walletAddress, '2');
    await fund(org, chainA, wallet.walletAddress, '100', 'USDC');
    const [r1, r2] = [recipient(), recipient()];
    const res = await org.core.request('POST', `/v1/master-wallets/${wallet.id}/transfer`, {
      body: { assets: [{ assetId: assets.USDC.id, recipient: r1, amount: '40.5' }, { assetId: assets.ETH.id, recipient: r2, amount: '0.25' }], note: 'payout #1' },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'QUEUED', kind: 'withdrawal', fromAddress: wallet.walletAddress, note: 'payout #1', addressId: null });

    const done = await settled(org, res.body.data.id);
    expect(done.status).toBe('CONFIRMED');
    expect(done.items.map((i: { status: string }) => i.status)).toEqual(['CONFIRMED', 'CONFIRMED']);
    expect(done.items.map((i: { nonce: string }) => i.nonce)).toEqual(['0', '1']);
    expect(await balanceOf('USDC', r1)).toBe(40_500_000n);
    expect(await balanceOf('ETH', r2)).toBe(ethers.parseEther('0.25'));
    expect(Number(done.items[1].gasFee)).toBeGreaterThan(0);
    // The trading ledger mirrors the chain: the amounts left when requested, the gas when mined.
    const gas = done.items.reduce((sum: bigint, i: { gasFee: string }) => sum + ethers.parseEther(i.gasFee), 0n);
    const ledgerEth = await eventually(async () => {
      const b = await t.keel.services.ledger.balance(t.keel.platform.db, wallet.id, assets.ETH.id, 'custody');
      return b.available !== ethers.parseEther('1.75') && b;
    });
    expect(ledgerEth.available).toBe(ethers.parseEther('1.75') - gas);
    expect(ledgerEth.available).toBe(await balanceOf('ETH', wallet.walletAddress));
    expect((await t.keel.services.ledger.balance(t.keel.platform.db, wallet.id, assets.USDC.id, 'custody')).available).toBe(59_500_000n);

    const events = (await t.keel.platform.db('outbox_events').where({ type: 'master.transfer_executed' }).orderBy('sequence')).map((r) => r.envelope.data).filter((d) => d.transferId === done.id);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ status: 'CONFIRMED', txhash: done.items[0].txHash, from: wallet.walletAddress, to: r1, amount: '40.5', asset: { symbol: 'USDC', decimals: 6 }, blockchain: { id: chainA } });

    // The sender's own history shows the withdrawals as outgoing.
    const history = await eventually(async () => {
      const h = await org.core.request('GET', `/v1/master-wallets/${wallet.id}/transactions?direction=outgoing`);
      return h.body.totalCount === 2 && h.body;
    });
    expect(history.transfer.map((r: { hash: string }) => r.hash).sort()).toEqual(done.items.map((i: { txHash: string }) => i.txHash).sort());
  });

  test('concurrent transfers from one address take consecutive nonces, none shared and none skipped, with two senders at work', async () => {
    const wallet = await createWallet(org, chainA);
    const address = (await org.core.request('POST', `/v1/master-wallets/${wallet.id}/addresses`, { body: {} })).body.data;
    await fund(org, chainA, address.address, '1');
    await fund(org, chainA, address.address, '100', 'USDT');
    // A second worker's sender, as another node would run it, competes for the same lines.
    const { services, platform } = t.keel;
    const secondSender = new TransactionSender(platform.db, platform.outbox, services.networks, services.chains, services.sendingWallets, { pollIntervalMs: 50, bumpAfterMs: 30_000, bumpPercent: 25 }, platform.logger);
    secondSender.onOutcome(services.custodyLedgerSync);
    const second = secondSender.start();
    try {
      const recipients = Array.from({ length: 20 }, recipient);
      const created = await Promise.all(recipients.map((r) => org.core.request('POST', `/v1/addresses/${address.id}/transfer`, { body: { assets: [{ assetId: assets.USDT.id, recipient: r, amount: '5' }] } })));
      expect(created.map((c) => c.status)).toEqual(Array(20).fill(201));
      const done = await Promise.all(created.map((c) => settled(org, c.body.data.id)));
      expect(done.map((d) => d.status)).toEqual(Array(20).fill('CONFIRMED'));
      expect(done.map((d) => Number(d.items[0].nonce)).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      for (const r of recipients) expect(await balanceOf('USDT', r)).toBe(5_000_000n);
      expect(await provider.getTransactionCount(address.address)).toBe(20);
    } finally {
      await second.stop();
    }
  });

  test('refuses what cannot be sent: too little balance, bad addresses, another chain, unknown wallets', async () => {
    const wallet = await createWallet(org, chainA);
    await fund(org, chainA, wallet.walletAddress, '1');
    await fund(org, chainA, wallet.walletAddress, '10', 'USDC');
    const send = (line: object, id = wallet.id, client = org.core) => client.request('POST', `/v1/master-wallets/${id}/transfer`, { body: { assets: [line] } });

    const poor = await send({ assetId: assets.USDC.id, recipient: recipient(), amount: '10.000001' });
    expect(poor.status).toBe(400);
    expect(poor.body.error).toMatchObject({ code: 'INSUFFICIENT_FUNDS', details: { available: '10', required: '10.000001' } });

    // Its checksum must mix cases: swapped, an all-lower or all-upper address would need no checksum at all.
    let good = recipient();
    while (!/[a-f]/.test(good.slice(2)) || !/[A-F]/.test(good.slice(2))) good = recipient();
    const badChecksum = good.slice(0, 2) + good.slice(2).split('').map((c) => (/[a-f]/.test(c) ? c.toUpperCase() : /[A-F]/.test(c) ? c.toLowerCase() : c)).join('');
    for (const bad of [badChecksum, '0x1234', 'not an address']) {
      const res = await send({ assetId: assets.USDC.id, recipient: bad, amount: '1' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_ADDRESS');
      expect(res.body.error.details.fields[0].field).toBe('assets.0.recipient');
    }
    const lowercase = await send({ assetId: assets.USDC.id, recipient: good.toLowerCase(), amount: '1' });
    expect(lowercase.status).toBe(201);
    expect(lowercase.body.data.items[0].recipient).toBe(good);

    const otherChain = await assetsOf(org, chainB);
    const wrongChain = await send({ assetId: otherChain.USDC.id, recipient: recipient(), amount: '1' });
    expect(wrongChain.status).toBe(400);
    expect(wrongChain.body.error.code).toBe('INVALID_NETWORK');

    const zero = await send({ assetId: assets.USDC.id, recipient: recipient(), amount: '0' });
    expect(zero.status).toBe(422);
    expect((await send({ assetId: assets.USDC.id, recipient: recipient(), amount: '1' }, wallet.id, other.core)).body.error.code).toBe('WALLET_NOT_FOUND');
    expect((await other.core.request('GET', `/v1/transfers/${lowercase.body.data.id}`)).status).toBe(404);
    expect((await send({ assetId: assets.USDC.id, recipient: recipient(), amount: '1' }, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  test("Keel's settlement contract is no recipient: a token or native line to it, in any casing, over REST or GraphQL, is 422 VALIDATION_ERROR naming the line and pointing to the deposit to trading (a key without the write scope is 403 first); nothing is sent or reserved, and the same lines to an ordinary recipient go", async () => {
    const deployments = t.keel.services.settlementDeployments;
    await deployments.ensureOnDevChain(t.keel.services.networks.get(chainA)!);
    const contract = (await deployments.address(chainA))!;
    const wallet = await createWallet(org, chainA);
    await fund(org, chainA, wallet.walletAddress, '1');
    await fund(org, chainA, wallet.walletAddress, '20', 'USDC');
    const [usdcHeld, ethHeld] = [await balanceOf('USDC', contract), await balanceOf('ETH', contract)];
    const ordinary = recipient();
    const lines = (to: string) => ({ assets: [{ assetId: assets.USDC.id, recipient: ordinary, amount: '1' }, { assetId: assets.USDC.id, recipient: to, amount: '10' }, { assetId: assets.ETH.id, recipient: to, amount: '0.1' }] });
    const send = (body: object, client = org.core) => client.request('POST', `/v1/master-wallets/${wallet.id}/transfer`, { body });

    const reader = org.core.with({ apiKey: (await org.core.post('/v1/api-keys', { name: 'reader', scopes: ['read'] })).body.data.secret, orgId: org.orgId });
    expect((await send(lines(contract), reader)).body.error.code).toBe('FORBIDDEN');
    for (const to of [contract, contract.toLowerCase(), '0x' + contract.slice(2).toUpperCase()]) {
      const res = await send(lines(to));
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'assets.1.recipient', error: 'INVALID_FIELD' }], settlementContract: contract } });
      expect(res.body.error.message).toMatch(/settlement contract.*trading\/deposits/);
    }
    // The native line alone is refused as well.
    const native = await send({ assets: [{ assetId: assets.ETH.id, recipient: contract.toLowerCase(), amount: '0.1' }] });
    expect([native.status, native.body.error.details.fields]).toEqual([422, [{ field: 'assets.0.recipient', error: 'INVALID_FIELD' }]]);
    const gql = await org.core.graphql('mutation($id: ID!, $input: TransferInput!) { transferFromMasterWallet(id: $id, input: $input) { id } }', { id: wallet.id, input: lines(contract) });
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'assets.1.recipient', error: 'INVALID_FIELD' }] } });

    expect((await org.core.request('GET', `/v1/transfers?masterWalletId=${wallet.id}`)).body.total).toBe(0);
    expect((await t.keel.services.ledger.balance(t.keel.platform.db, wallet.id, assets.USDC.id, 'custody')).available).toBe(20_000_000n);
    const sent = await send(lines(recipient()));
    expect(sent.status).toBe(201);
    expect((await settled(org, sent.body.data.id)).status).toBe('CONFIRMED');
    expect(await balanceOf('USDC', ordinary)).toBe(1_000_000n);
    expect([await balanceOf('USDC', contract), await balanceOf('ETH', contract)]).toEqual([usdcHeld, ethHeld]);
  });

  test('a line the chain refuses fails and is reported as master.transfer_failed', async () => {
    const wallet = await createWallet(org, chainA);
    await fund(org, chainA, wallet.walletAddress, '1');
    await fund(org, chainA, wallet.walletAddress, '5', 'DAI');
    // ERC-20 tokens refuse transfers to the zero address.
    const res = await org.core.request('POST', `/v1/master-wallets/${wallet.id}/transfer`, { body: { assets: [{ assetId: assets.DAI.id, recipient: ethers.ZeroAddress, amount: '1' }] } });
    const done = await settled(org, res.body.data.id);
    expect(done).toMatchObject({ status: 'FAILED', items: [{ status: 'FAILED', error: expect.stringMatching(/refuses/) }] });
    const events = (await t.keel.platform.db('outbox_events').where({ type: 'master.transfer_failed' })).map((r) => r.envelope.data);
    expect(events.find((d) => d.transferId === done.id)).toMatchObject({ status: 'FAILED', amount: '1', asset: { symbol: 'DAI' } });
  });

  test('configurations.security: the amount cap and the recipient list refuse; approval holds a transfer until another admin key than the one that asked approves it, or any admin rejects it', async () => {
    const allowed = recipient();
    const wallet = await createWallet(org, chainA, { security: { maxTransferAmount: '10', allowedRecipients: [allowed], requireApprovalForTransfers: true } });
    await fund(org, chainA, wallet.walletAddress, '1');
    await fund(org, chainA, wallet.walletAddress, '50', 'USDC');
    const send = (to: string, amount: string) => org.core.request('POST', `/v1/master-wallets/${wallet.id}/transfer`, { body: { assets: [{ assetId: assets.USDC.id, recipient: to, amount }] } });

    const tooMuch = await send(allowed, '10.5');
    expect(tooMuch.status).toBe(403);
    expect(tooMuch.body.error.message).toMatch(/maxTransferAmount/);
    const stranger = await send(recipient(), '1');
    expect(stranger.status).toBe(403);
    expect(stranger.body.error.message).toMatch(/allowedRecipients/);

    const held = await send(allowed, '10');
    expect(held.status).toBe(201);
    expect(held.body.data.status).toBe('PENDING_APPROVAL');
    const refused = await send(allowed, '2');
    await new Promise((r) => setTimeout(r, 800));
    expect((await org.core.request('GET', `/v1/transfers/${held.body.data.id}`)).body.data.items[0]).toMatchObject({ status: 'PENDING_APPROVAL', txHash: null });

    const writeKey = (await org.core.request('POST', '/v1/api-keys', { body: { name: 'ops', scopes: ['read', 'write'] } })).body.data.secret;
    const writer = org.core.with({ apiKey: writeKey, orgId: org.orgId });
    expect((await writer.request('POST', `/v1/transfers/${held.body.data.id}/approve`)).status).toBe(403);

    // Four eyes: the admin key that asked cannot approve, neither itself nor through an access token it issued.
    const requester = held.body.data.requestedBy;
    expect(requester).toEqual(expect.any(String));
    const ownApproval = await org.core.request('POST', `/v1/transfers/${held.body.data.id}/approve`);
    expect(ownApproval.status).toBe(403);
    expect(ownApproval.body.error).toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(/another administrator must approve/) });
    const token = (await org.core.request('POST', '/v1/tokens', { body: { scopes: ['admin'] } })).body.data.token;
    const byToken = await org.core.with({}).request('POST', `/v1/transfers/${held.body.data.id}/approve`, { headers: { Authorization: `Bearer ${token}` } });
    expect(byToken.status).toBe(403);
    expect((await org.core.request('GET', `/v1/transfers/${held.body.data.id}`)).body.data).toMatchObject({ status: 'PENDING_APPROVAL', requestedBy: requester, decidedBy: null, decidedAt: null });

    const approver = await anotherAdmin(org);
    const approved = await approver.core.request('POST', `/v1/transfers/${held.body.data.id}/approve`);
    expect(approved.body.data).toMatchObject({ status: 'QUEUED', requestedBy: requester, decidedBy: approver.keyId, decidedAt: expect.any(String) });
    // Withdrawing one's own request is no risk: the key that asked may reject.
    const rejected = await org.core.request('POST', `/v1/transfers/${refused.body.data.id}/reject`);
    expect(rejected.body.data).toMatchObject({ status: 'REJECTED', requestedBy: requester, decidedBy: requester, items: [{ status: 'REJECTED' }] });
    expect((await approver.core.request('POST', `/v1/transfers/${refused.body.data.id}/approve`)).status).toBe(409);

    expect((await settled(org, held.body.data.id)).status).toBe('CONFIRMED');
    expect(await balanceOf('USDC', allowed)).toBe(10_000_000n);
    const list = await org.core.request('GET', `/v1/transfers?masterWalletId=${wallet.id}`);
    expect(list.body).toMatchObject({ total: 2, hasMore: false });
  });

  test('autoSweep: a token balance reaching the threshold is swept to the master wallet, gas topped up from it first', async () => {
    const wallet = await createWallet(org, chainA, { autoSweep: { enabled: true, threshold: '50' }, enableGaslessWithdraw: true });
    const address = (await org.core.request('POST', `/v1/master-wallets/${wallet.id}/addresses`, { body: {} })).body.data;
    await fund(org, chainA, wallet.walletAddress, '1');
    await fund(org, chainA, address.address, '30', 'USDC');
    await eventually(async () => (await org.core.request('GET', `/v1/addresses/${address.id}/transactions`)).body.totalCount === 1);
    expect((await org.core.request('GET', `/v1/transfers?masterWalletId=${wallet.id}`)).body.total).toBe(0); // below the threshold

    await fund(org, chainA, address.address, '25', 'USDC');
    const sweeps = await eventually(async () => {
      const list = (await org.core.request('GET', `/v1/transfers?masterWalletId=${wallet.id}`)).body.data;
      return list.length === 2 && list.every((x: { status: string }) => x.status === 'CONFIRMED') && list;
    }, 30_000);
    const byKind = Object.fromEntries(sweeps.map((x: { kind: string }) => [x.kind, x]));
    expect(byKind.gas_topup).toMatchObject({ fromAddress: wallet.walletAddress, items: [{ recipient: address.address, asset: { symbol: 'ETH' } }] });
    expect(byKind.sweep).toMatchObject({ fromAddress: address.address, addressId: address.id, items: [{ recipient: wallet.walletAddress, amount: '55' }] });
    expect(await balanceOf('USDC', address.address)).toBe(0n);
    expect(await balanceOf('USDC', wallet.walletAddress)).toBe(55_000_000n);
    const events = (await t.keel.platform.db('outbox_events').where({ type: 'address.transfer_executed' })).map((r) => r.envelope.data);
    expect(events.find((d) => d.transferId === byKind.sweep.id)).toMatchObject({ kind: 'sweep', amount: '55', wallet: { id: address.id } });
  });

  test('enableGaslessWithdraw: a withdrawal from a deposit address holding no native coin gets its gas from the master wallet first (held for approval with it), waits for it, and confirms; without the flag, or from a master wallet (nothing tops it up), it is refused INSUFFICIENT_FUNDS', async () => {
    const wallet = await createWallet(org, chainA, { enableGaslessWithdraw: true });
    const address = (await org.core.request('POST', `/v1/master-wallets/${wallet.id}/addresses`, { body: {} })).body.data;
    await fund(org, chainA, wallet.walletAddress, '1');
    await fund(org, chainA, address.address, '30', 'USDC');
    expect(await balanceOf('ETH', address.address)).toBe(0n);

    const to = recipient();
    const res = await org.core.request('POST', `/v1/addresses/${address.id}/transfer`, { body: { assets: [{ assetId: assets.USDC.id, recipient: to, amount: '10' }] } });
    expect(res.status).toBe(201);
    const topUp = (await org.core.request('GET', `/v1/transfers?masterWalletId=${wallet.id}`)).body.data.find((x: { kind: string }) => x.kind === 'gas_topup');
    expect(topUp).toMatchObject({ fromAddress: wallet.walletAddress, addressId: null, items: [{ recipient: address.address, asset: { symbol: 'ETH' } }] });

    const done = await settled(org, res.body.data.id);
    expect(done).toMatchObject({ status: 'CONFIRMED', kind: 'withdrawal', fromAddress: address.address, items: [{ status: 'CONFIRMED', amount: '10' }] });
    expect(await balanceOf('USDC', to)).toBe(10_000_000n);
    const paid = await settled(org, topUp.id);
    expect(paid.status).toBe('CONFIRMED');
    // The line was signed only once its gas had arrived: mined after the top-up.
    expect(Number(done.items[0].blockNumber)).toBeGreaterThan(Number(paid.items[0].blockNumber));

    // Held for approval, its top-up is held with it: rejecting the withdrawal rejects the top-up, and no gas money moves.
    const held = await createWallet(org, chainA, { enableGaslessWithdraw: true, security: { requireApprovalForTransfers: true } });
    const customer = (await org.core.request('POST', `/v1/master-wallets/${held.id}/addresses`, { body: {} })).body.data;
    await fund(org, chainA, held.walletAddress, '1');
    await fund(org, chainA, customer.address, '30', 'USDC');
    const waiting = await org.core.request('POST', `/v1/addresses/${customer.id}/transfer`, { body: { assets: [{ assetId: assets.USDC.id, recipient: recipient(), amount: '10' }] } });
    expect([waiting.status, waiting.body.data.status]).toEqual([201, 'PENDING_APPROVAL']);
    const heldTopUp = (await org.core.request('GET', `/v1/transfers?masterWalletId=${held.id}`)).body.data.find((x: { kind: string }) => x.kind === 'gas_topup');
    expect(heldTopUp).toMatchObject({ status: 'PENDING_APPROVAL', items: [{ recipient: customer.address }] });
    expect((await org.core.request('POST', `/v1/transfers/${waiting.body.data.id}/reject`)).status).toBe(200);
    expect((await org.core.request('GET', `/v1/transfers/${heldTopUp.id}`)).body.data.status).toBe('REJECTED');

    const strict = await createWallet(org, chainA);
    const dry = (await org.core.request('POST', `/v1/master-wallets/${strict.id}/addresses`, { body: {} })).body.data;
    await fund(org, chainA, strict.walletAddress, '1');
    await fund(org, chainA, dry.address, '30', 'USDC');
    const refused = await org.core.request('POST', `/v1/addresses/${dry.id}/transfer`, { body: { assets: [{ assetId: assets.USDC.id, recipient: recipient(), amount: '10' }] } });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'INSUFFICIENT_FUNDS']);

    // The flag tops up a deposit address only: a master wallet under it holding no native coin is refused up front, nothing queued.
    const master = await createWallet(org, chainA, { enableGaslessWithdraw: true });
    await fund(org, chainA, master.walletAddress, '30', 'USDC');
    expect(await balanceOf('ETH', master.walletAddress)).toBe(0n);
    const noGas = await org.core.request('POST', `/v1/master-wallets/${master.id}/transfer`, { body: { assets: [{ assetId: assets.USDC.id, recipient: recipient(), amount: '10' }] } });
    expect([noGas.status, noGas.body.error?.code]).toEqual([400, 'INSUFFICIENT_FUNDS']);
    expect((await org.core.request('GET', `/v1/transfers?masterWalletId=${master.id}`)).body.data).toEqual([]);
  });

  test('autoSweep of the native coin sends the balance less gas to the destination address', async () => {
    const destination = recipient();
    // A sweep destination other than the wallet must be one of its allowed recipients.
    const wallet = await createWallet(org, chainA, { autoSweep: { enabled: true, threshold: '1', destinationAddress: destination }, security: { allowedRecipients: [destination] } });
    const address = (await org.core.request('POST', `/v1/master-wallets/${wallet.id}/addresses`, { body: {} })).body.data;
    await fund(org, chainA, address.address, '1.5');
    const [sweep] = await eventually(async () => {
      const list = (await org.core.request('GET', `/v1/transfers?masterWalletId=${wallet.id}`)).body.data;
      return list.length === 1 && list[0].status === 'CONFIRMED' && list;
    }, 30_000);
    expect(sweep).toMatchObject({ kind: 'sweep', items: [{ recipient: destination }] });
    const received = await balanceOf('ETH', destination);
    expect(received).toBe(BigInt(sweep.items[0].rawAmount));
    expect(received).toBeGreaterThan(ethers.parseEther('1.49'));
    expect(received).toBeLessThan(ethers.parseEther('1.5'));
  });

  test('autoSweep into one of the wallet\'s own addresses: the others are swept into it, and a deposit to that address itself sweeps nothing', async () => {
    const wallet = await createWallet(org, chainA);
    const newAddress = async () => (await org.core.request('POST', `/v1/master-wallets/${wallet.id}/addresses`, { body: {} })).body.data;
    const collector = await newAddress();
    const other = await newAddress();
    const set = await org.core.request('PATCH', `/v1/master-wallets/${wallet.id}`, { body: { configurations: { autoSweep: { enabled: true, threshold: '1', destinationAddress: collector.address }, security: { allowedRecipients: [collector.address] } } } });
    expect(set.status).toBe(200);
    await fund(org, chainA, collector.address, '1.5');
    await fund(org, chainA, other.address, '1.5');
    const db = t.keel.platform.db;
    await eventually(async () => (await db('chain_transfers').where({ addressId: collector.id, direction: 'incoming', status: 'CONFIRMED' })).length >= 1, 30_000);
    const [sweep] = await eventually(async () => {
      const list = (await org.core.request('GET', `/v1/transfers?masterWalletId=${wallet.id}`)).body.data;
      return list.length >= 1 && list.every((x: { status: string }) => x.status === 'CONFIRMED') && list;
    }, 30_000);
    expect(sweep).toMatchObject({ kind: 'sweep', fromAddress: other.address, items: [{ recipient: collector.address }] });
    expect((await org.core.request('GET', `/v1/transfers?masterWalletId=${wallet.id}`)).body.data).toHaveLength(1);
  });

  test('estimates gas in the spec shape', async () => {
    const wallet = await createWallet(org, chainA);
    await fund(org, chainA, wallet.walletAddress, '1');
    await fund(org, chainA, wallet.walletAddress, '10', 'USDC');
    const r = recipient();
    const res = await org.core.request('POST', `/v1/master-wallets/${wallet.id}/transfer/estimate-gas`, {
      body: { assets: [{ assetId: assets.USDC.id, recipient: r, amount: '1' }, { assetId: assets.ETH.id, recipient: r, amount: '0.1' }] },
    });
    expect(res.status).toBe(200);
    const { assets: lines, estimatedFee } = res.body.data;
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ amount: '1', asset: { id: assets.USDC.id }, blockchain: { id: chainA }, destinationAddress: r });
    expect(Number(estimatedFee.callGasLimit)).toBeGreaterThan(21_000 + 21_000);
    expect(estimatedFee.verificationGasLimi).toBe('0');
    expect(BigInt(estimatedFee.value)).toBe(ethers.parseEther(estimatedFee.amount));
  });

  test('an amount no token could carry (2^256 base units or more) is refused as the field it is, not as the node failing', async () => {
    const wallet = await createWallet(org, chainA);
    const amount = '9'.repeat(80);
    for (const path of ['transfer/estimate-gas', 'transfer']) {
      const res = await org.core.request('POST', `/v1/master-wallets/${wallet.id}/${path}`, { body: { assets: [{ assetId: assets.USDC.id, recipient: recipient(), amount }] } });
      expect([res.status, res.body.error?.details?.fields?.[0]?.field]).toEqual([422, 'assets.0.amount']);
    }
  });

  test("an amount with more decimals than the asset is accepted when the digits past them are zeros (its value is exact), and is 422 naming the line when one is not", async () => {
    const wallet = await createWallet(org, chainA);
    await fund(org, chainA, wallet.walletAddress, '1');
    await fund(org, chainA, wallet.walletAddress, '20', 'USDC');
    const send = (amount: string) => org.core.request('POST', `/v1/master-wallets/${wallet.id}/transfer`, { body: { assets: [{ assetId: assets.USDC.id, recipient: recipient(), amount }] } });

    const zeros = await send('10.0000000');
    expect(zeros.status).toBe(201);
    expect(zeros.body.data.items[0].amount).toBe('10');

    const extra = await send('1.0000001');
    expect([extra.status, extra.body.error.details.fields[0].field]).toEqual([422, 'assets.0.amount']);
    expect(extra.body.error.message).toMatch(/no non-zero digit after the first 6 decimals/);
    expect((await t.keel.services.ledger.balance(t.keel.platform.db, wallet.id, assets.USDC.id, 'custody')).available).toBe(10_000_000n);
  });
});

describe('a transaction stuck below the market fee', () => {
  let k: OwnChainKeel;
  let chain: DevChain;
  let t: TestKeel;

  beforeAll(async () => {
    k = await startKeelOnOwnChain(31_340, 1, { ...FAST, TRANSFER_FEE_BUMP_AFTER_MS: 300 });
    ({ chain, t } = k);
    keelUnderTest = t;
  }, 60_000);
  afterAll(() => k?.stop());

  test('is re-sent with the same nonce and a higher fee; the replaced hash is kept and the new one confirms', async () => {
    const org = await t.createOrg();
    const [chainId] = (await org.core.request('GET', '/v1/blockchains')).body.data.map((c: { id: string }) => c.id);
    const assets = await assetsOf(org, chainId);
    const wallet = await createWallet(org, chainId);
    await fund(org, chainId, wallet.walletAddress, '5');

    await setAutomine(chain.rpcUrl, false);
    const res = await org.core.request('POST', `/v1/master-wallets/${wallet.id}/transfer`, { body: { assets: [{ assetId: assets.ETH.id, recipient: recipient(), amount: '0.5' }] } });
    const first = await eventually(async () => {
      const item = (await org.core.request('GET', `/v1/transfers/${res.body.data.id}`)).body.data.items[0];
      return item.status === 'SUBMITTED' && item;
    });
    // The market moves: the next block's base fee jumps far above what the transaction offers.
    await rpc(chain.rpcUrl, 'hardhat_setNextBlockBaseFeePerGas', [ethers.toQuantity(ethers.parseUnits('500', 'gwei'))]);
    await mine(chain.rpcUrl, 1);
    // The replacement is watched before it is broadcast, and becomes the line's transaction once the node has taken it.
    const bumped = await eventually(async () => {
      const item = (await org.core.request('GET', `/v1/transfers/${res.body.data.id}`)).body.data.items[0];
      return item.txHash !== first.txHash && item;
    });
    expect(bumped.replacedTxHashes).toEqual([first.txHash]);
    expect(bumped.nonce).toBe(first.nonce);
    const provider = t.keel.services.networks.get(chainId)!.provider;
    expect(await provider.getTransaction(bumped.txHash)).not.toBeNull();
    await setAutomine(chain.rpcUrl, true);
    await mine(chain.rpcUrl, 2);

    const done = await settled(org, res.body.data.id);
    expect(done.status).toBe('CONFIRMED');
    expect(done.items[0].replacedTxHashes).toContain(first.txHash);
    expect(done.items[0].txHash).not.toBe(first.txHash);
    expect(await provider.getTransactionReceipt(first.txHash)).toBeNull();
  });
});

describe('gasless withdrawals from one address, queued back to back', () => {
  let k: OwnChainKeel;

  beforeAll(async () => {
    // Two confirmations on a chain that mines only what arrives: a gas top-up mined waits for the next block to confirm.
    k = await startKeelOnOwnChain(31_362, 2, FAST);
    keelUnderTest = k.t;
  }, 60_000);
  afterAll(() => k?.stop());

  /** The transfer final, mining a block a poll meanwhile. */
  const minedThrough = (org: TestOrg, transferId: string) =>
    eventually(async () => {
      const res = await org.core.request('GET', `/v1/transfers/${transferId}`);
      if (['CONFIRMED', 'FAILED', 'REJECTED'].includes(res.body.data.status)) return res.body.data;
      await mine(k.chain.rpcUrl, 1);
      return false;
    }, 30_000, 200);

  test("the second withdrawal, asked for once the first one's top-up has arrived and before the first is sent, has the first's gas counted: it gets its own top-up and both confirm", async () => {
    const { org, blockchainId, t } = k;
    const assets = await assetsOf(org, blockchainId);
    const provider = t.keel.services.networks.get(blockchainId)!.provider;
    const wallet = await createWallet(org, blockchainId, { enableGaslessWithdraw: true });
    const address = (await org.core.request('POST', `/v1/master-wallets/${wallet.id}/addresses`, { body: {} })).body.data;
    for (const [to, amount, asset] of [[wallet.walletAddress, '1', 'ETH'], [address.address, '30', 'USDC']]) {
      const { txHash } = (await org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId, address: to, amount, asset } })).body.data;
      await mine(k.chain.rpcUrl, 1);
      await eventually(async () => (await t.keel.platform.db('ledger_entries').where('reference', 'like', `deposit:${blockchainId}:${txHash}:%`).first()) !== undefined);
    }
    const withdraw = () => org.core.request('POST', `/v1/addresses/${address.id}/transfer`, { body: { assets: [{ assetId: assets.USDC.id, recipient: recipient(), amount: '10' }] } });

    // A base fee far below the tip (as on many rollups): a transaction pays about what its gas was priced at, so
    // the headroom one top-up carries does not stretch to a second line.
    await rpc(k.chain.rpcUrl, 'hardhat_setNextBlockBaseFeePerGas', [ethers.toQuantity(1_000_000n)]);
    await mine(k.chain.rpcUrl, 1);

    const first = await withdraw();
    expect(first.status).toBe(201);
    // Its top-up is mined (the address holds its gas), not yet confirmed: the first withdrawal's line waits, unsent.
    await eventually(async () => (await provider.getBalance(address.address)) > 0n);
    const second = await withdraw();
    expect(second.status).toBe(201);
    expect((await org.core.request('GET', `/v1/transfers/${first.body.data.id}`)).body.data.items[0]).toMatchObject({ status: 'QUEUED', txHash: null });

    for (const w of [first, second]) expect(await minedThrough(org, w.body.data.id)).toMatchObject({ status: 'CONFIRMED', items: [{ status: 'CONFIRMED' }] });
    const topUps = (await org.core.request('GET', `/v1/transfers?masterWalletId=${wallet.id}`)).body.data.filter((x: { kind: string }) => x.kind === 'gas_topup');
    expect(topUps).toHaveLength(2);
    expect(await balanceOfToken(provider, assets.USDC.address, address.address)).toBe(10_000_000n);
  });
});

async function balanceOfToken(provider: ethers.JsonRpcProvider, token: string, owner: string): Promise<bigint> {
  return erc20.decodeFunctionResult('balanceOf', await provider.call({ to: token, data: erc20.encodeFunctionData('balanceOf', [owner]) }))[0] as bigint;
}
