/**
 * Solana withdrawals through the transfer API (issue 35), against the sandbox Solana network with
 * real PostgreSQL and Redis: SOL and USDC (to a recipient without a token account: created, its rent
 * paid by the sender and charged as the line's fee) each sent once and followed to finalized, the
 * balances on chain and in the custody ledger checked; a transfer held for approval, approved and
 * sent, another rejected and refunded; an over-policy amount, a recipient outside the allow-list and
 * invalid addresses refused with the spec's envelope; another organisation gets 404; USDC to a token
 * account: another's of the mint paid directly, the wallet's own, a mint and another mint's refused
 * (nothing lands in a token account of a token account), a multisig vault a wallet. Auto-sweep: a
 * USDC deposit into an address without SOL swept after the master wallet tops it up (the sweep waits
 * for the top-up to be finalized), balances on chain and in the ledger right, swept once across a
 * restart of Keel; a SOL deposit swept less its fee, the address left empty; a dust deposit into a
 * stray (not associated) token account of the address credited and left there, the deposit in its
 * associated token account swept all the same; a Solana destinationAddress in allowedRecipients
 * accepted and swept into, an EVM one or one differing in case refused. (A flagged deposit held:
 * solana-aml.test.ts; a paid checkout swept: payments/solana-checkout.test.ts.)
 */
import { randomUUID } from 'node:crypto';
import { address, generateKeyPairSigner, getAddressEncoder, getProgramDerivedAddress, isAddress } from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import { findAssociatedTokenPda, getInitializeAccount3Instruction, getTransferCheckedInstruction } from '@solana-program/token';
import { fundFromSolanaFaucet } from '../../../src/platform/solana-devnet/faucet';
import type { SolanaDevnet } from '../../../src/platform/solana-devnet/devnet';
import { DEVNET_MINTS } from '../../../src/platform/solana-devnet/genesis';
import { SolanaChain, TOKEN_PROGRAM } from '../../../src/platform/chain-port/solana-chain';
import { anotherAdmin, type TestKeel, type TestOrg } from '../../support/keel';
import { eventually } from '../../support/eventually';
import { ApiClient } from '../../support/api-client';
import type { ChainAsset } from '../../../src/platform/chain-port/chain-port';
import { custodyBalance, fundFromFaucet, sendInstructions, settledTransfer, solanaCluster, startSolanaKeel } from './solana-keel';

jest.setTimeout(180_000);

const USDC = DEVNET_MINTS.find((m) => m.symbol === 'USDC')!;
let devnet: SolanaDevnet;
let chain: SolanaChain;
let t: TestKeel;
let org: TestOrg;
let other: TestOrg;
let solanaId: string;
let assets: Record<string, { id: string }>;

beforeAll(async () => {
  ({ devnet, chain, t } = await startSolanaKeel());
  org = await t.createOrg();
  other = await t.createOrg();
  ({ solanaId, assets } = await solanaCluster(org));
});

afterAll(async () => {
  await t?.stop();
  await devnet?.stop();
});

async function solanaWallet(configurations?: object): Promise<{ id: string; walletAddress: string }> {
  const res = await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Solana payouts', configurations });
  expect(res.status).toBe(201);
  return res.body.data;
}

const fund = (to: string, amount: string, asset?: string) => fundFromFaucet(t, org, solanaId, to, amount, asset);
const settled = (transferId: string) => settledTransfer(org, transferId);
const custody = (walletId: string, assetId: string) => custodyBalance(t, walletId, assetId);
const lamports = (sol: string) => BigInt(Math.round(Number(sol) * 1e9));
const newRecipient = async () => (await generateKeyPairSigner()).address;
const swapCase = (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());

test('SOL and USDC withdrawals: sent once, finalized, the token account created with its rent charged, balances on chain and in the ledger', async () => {
  const wallet = await solanaWallet();
  await fund(wallet.walletAddress, '3');
  await fund(wallet.walletAddress, '100', 'USDC');
  const solBefore = await chain.balance(wallet.walletAddress, { kind: 'native' }, 'final');

  // USDC to a recipient that has no token account: the transfer creates it.
  const usdcTo = await newRecipient();
  const [ata] = await findAssociatedTokenPda({ owner: address(usdcTo), mint: address(USDC.address), tokenProgram: TOKEN_PROGRAM });
  expect((await chain.rpc.getAccountInfo(ata, { encoding: 'base64' }).send()).value).toBeNull();
  const key = randomUUID();
  const body = { assets: [{ assetId: assets.USDC.id, recipient: usdcTo, amount: '12.5' }], note: 'usdc payout' };
  const created = await org.core.post(`/v1/master-wallets/${wallet.id}/transfer`, body, { 'Idempotency-Key': key });
  expect(created.status).toBe(201);
  expect(created.body.data).toMatchObject({ status: 'QUEUED', blockchainId: solanaId, fromAddress: wallet.walletAddress, items: [{ recipient: usdcTo, amount: '12.5', status: 'QUEUED' }] });
  // The ledger is debited when the transfer is recorded.
  expect(await custody(wallet.id, assets.USDC.id)).toBe(87_500_000n);
  const usdcDone = await settled(created.body.data.id);
  expect(usdcDone.status).toBe('CONFIRMED');
  const usdcLine = usdcDone.items[0];
  expect(usdcLine.txHash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  expect(await chain.balance(usdcTo, { kind: 'token', address: USDC.address, decimals: 6 }, 'final')).toBe(12_500_000n);
  // The rent of the new token account is part of the line's fee, paid by the sender.
  const rent = await chain.rpc.getMinimumBalanceForRentExemption(165n).send();
  const usdcFee = lamports(usdcLine.gasFee);
  expect(usdcFee).toBeGreaterThanOrEqual(rent + 5000n);
  expect((await chain.rpc.getAccountInfo(ata, { encoding: 'base64', commitment: 'finalized' }).send()).value!.lamports).toBe(rent);
  // The same Idempotency-Key answers the same transfer; nothing new is sent.
  const again = await org.core.post(`/v1/master-wallets/${wallet.id}/transfer`, body, { 'Idempotency-Key': key });
  expect(again.body.data.id).toBe(created.body.data.id);

  // SOL to a new account.
  const solTo = await newRecipient();
  const sol = await org.core.post(`/v1/master-wallets/${wallet.id}/transfer`, { assets: [{ assetId: assets.SOL.id, recipient: solTo, amount: '0.75' }] });
  expect(sol.status).toBe(201);
  const solDone = await settled(sol.body.data.id);
  expect(solDone.status).toBe('CONFIRMED');
  expect(await chain.balance(solTo, { kind: 'native' }, 'final')).toBe(750_000_000n);
  const solFee = lamports(solDone.items[0].gasFee);
  expect(solFee).toBeGreaterThanOrEqual(5000n);

  // The sender paid exactly the amounts and the recorded fees; the custody ledger mirrors the chain.
  const solAfter = await chain.balance(wallet.walletAddress, { kind: 'native' }, 'final');
  expect(solAfter).toBe(solBefore - 750_000_000n - usdcFee - solFee);
  await eventually(async () => (await custody(wallet.id, assets.SOL.id)) === solAfter, 10_000);
  expect(await custody(wallet.id, assets.USDC.id)).toBe(87_500_000n);

  // Each sent once: one transaction on chain for each recipient.
  expect(await chain.rpc.getSignaturesForAddress(address(solTo)).send()).toHaveLength(1);
  expect((await chain.rpc.getSignaturesForAddress(address(usdcTo)).send()).map((s) => s.signature)).toEqual([usdcLine.txHash]);
  expect(await t.keel.platform.db('transfers').where({ masterWalletId: wallet.id })).toHaveLength(2);

  // The spec's event, as for EVM (the fee in SOL).
  const events = await eventually(async () => {
    const rows = (await t.keel.platform.db('outbox_events').where({ type: 'master.transfer_executed' })).map((r) => r.envelope.data).filter((d) => d.wallet.id === wallet.id);
    return rows.length === 2 && rows;
  });
  expect(events.find((e: { transferId: string }) => e.transferId === created.body.data.id)).toMatchObject({
    status: 'CONFIRMED',
    txhash: usdcLine.txHash,
    from: wallet.walletAddress,
    to: usdcTo,
    amount: '12.5',
    asset: { id: assets.USDC.id, symbol: 'USDC', decimals: 6 },
    blockchain: { id: solanaId },
    blockNumber: expect.stringMatching(/^\d+$/),
    gasFee: usdcLine.gasFee,
    error: null,
  });
});

test('a line confirmed and not yet finalized counts once: the rest of the balance can be sent while it waits, the line showing its slot', async () => {
  const wallet = await solanaWallet();
  await fund(wallet.walletAddress, '1');
  await fund(wallet.walletAddress, '100', 'USDC');
  const usdc = { kind: 'token', address: USDC.address, decimals: 6 } as const;
  const to = await newRecipient();
  const send = (amount: string) => org.core.post(`/v1/master-wallets/${wallet.id}/transfer`, { assets: [{ assetId: assets.USDC.id, recipient: to, amount }] });
  const first = await send('60');
  expect(first.status).toBe(201);
  // Confirmed: out of the balance at confirmed, about 13 s before it is finalized.
  const seen = await eventually(async () => {
    const line = (await org.core.get(`/v1/transfers/${first.body.data.id}`)).body.data.items[0];
    return line.blockNumber !== null && line;
  }, 30_000, 50);
  expect(seen.status).toBe('SUBMITTED');
  expect(await chain.balance(wallet.walletAddress, usdc, 'confirmed')).toBe(40_000_000n);

  const rest = await send('40');
  expect(rest.status).toBe(201);
  const done = await Promise.all([first, rest].map((r) => settled(r.body.data.id)));
  expect(done.map((d) => d.status)).toEqual(['CONFIRMED', 'CONFIRMED']);
  expect(done[0].items[0].blockNumber).toBe(seen.blockNumber);
  expect(await chain.balance(to, usdc, 'final')).toBe(100_000_000n);
});

test('the security policy: over the cap and outside the allow-list refused, invalid addresses refused, held for approval then approved and sent, or rejected and refunded; another organisation gets 404', async () => {
  const allowed = await newRecipient();
  const wallet = await solanaWallet({ security: { maxTransferAmount: '1', allowedRecipients: [allowed], requireApprovalForTransfers: true } });
  await fund(wallet.walletAddress, '3');
  const send = (line: object) => org.core.post(`/v1/master-wallets/${wallet.id}/transfer`, { assets: [{ assetId: assets.SOL.id, ...line }] });

  const over = await send({ recipient: allowed, amount: '1.5' });
  expect(over.status).toBe(403);
  expect(over.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'assets.0.amount' }] } });
  const outside = await send({ recipient: await newRecipient(), amount: '0.5' });
  expect(outside.status).toBe(403);
  expect(outside.body.error.details.fields[0].field).toBe('assets.0.recipient');
  for (const recipient of ['not-a-solana-address', '0x52908400098527886E0F7030069857D2E4169EE7', `${allowed.slice(0, -1)}0`, allowed.slice(0, 20)]) {
    const bad = await send({ recipient, amount: '0.5' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_ADDRESS', details: { fields: [{ field: 'assets.0.recipient', error: 'INVALID_FIELD' }] } });
  }
  // To itself: it would land, move nothing and leave the ledger short of the amount.
  const open = await solanaWallet();
  await fund(open.walletAddress, '1');
  const itself = await org.core.post(`/v1/master-wallets/${open.id}/transfer`, { assets: [{ assetId: assets.SOL.id, recipient: allowed, amount: '0.1' }, { assetId: assets.SOL.id, recipient: open.walletAddress, amount: '0.1' }] });
  expect(itself.status).toBe(400);
  expect(itself.body.error).toMatchObject({ code: 'INVALID_ADDRESS', details: { fields: [{ field: 'assets.1.recipient', error: 'INVALID_FIELD' }] } });
  // An allow-list entry that is neither address is refused when the configuration is set.
  expect((await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'bad', configurations: { security: { allowedRecipients: ['nope'] } } })).status).toBe(422);

  // Another organisation: 404 on the wallet and on the transfer.
  expect((await other.core.post(`/v1/master-wallets/${wallet.id}/transfer`, { assets: [{ assetId: assets.SOL.id, recipient: allowed, amount: '0.5' }] })).status).toBe(404);

  const held = await send({ recipient: allowed, amount: '0.5' });
  expect(held.status).toBe(201);
  expect(held.body.data.status).toBe('PENDING_APPROVAL');
  expect((await other.core.get(`/v1/transfers/${held.body.data.id}`)).status).toBe(404);
  expect((await other.core.post(`/v1/transfers/${held.body.data.id}/approve`)).status).toBe(404);
  const rejectedOne = await send({ recipient: allowed, amount: '0.25' });
  const before = await custody(wallet.id, assets.SOL.id);
  // Nothing is sent while it waits.
  await new Promise((r) => setTimeout(r, 1000));
  expect(await chain.balance(allowed, { kind: 'native' }, 'confirmed')).toBe(0n);

  expect((await org.core.post(`/v1/transfers/${rejectedOne.body.data.id}/reject`)).body.data.status).toBe('REJECTED');
  expect(await custody(wallet.id, assets.SOL.id)).toBe(before + 250_000_000n);
  const approved = await (await anotherAdmin(org)).core.post(`/v1/transfers/${held.body.data.id}/approve`);
  expect(approved.body.data.status).toBe('QUEUED');
  const done = await settled(held.body.data.id);
  expect(done.status).toBe('CONFIRMED');
  expect(await chain.balance(allowed, { kind: 'native' }, 'final')).toBe(500_000_000n);
  expect(await chain.rpc.getSignaturesForAddress(address(allowed)).send()).toHaveLength(1);
});

test("USDC to a token account: another's USDC account is paid directly; the wallet's own, a mint, another mint's account refused; a program-derived vault is a wallet; nothing lands in a token account of a token account", async () => {
  const wallet = await solanaWallet();
  await fund(wallet.walletAddress, '2');
  await fund(wallet.walletAddress, '100', 'USDC');
  const mint = address(USDC.address);
  const usdc = { kind: 'token', address: USDC.address, decimals: 6 } as const;
  const ataOf = async (owner: string, ofMint = mint) => (await findAssociatedTokenPda({ owner: address(owner), mint: ofMint, tokenProgram: TOKEN_PROGRAM }))[0];
  const exists = async (account: string) => (await chain.rpc.getAccountInfo(address(account), { encoding: 'base64', commitment: 'confirmed' }).send()).value !== null;
  const send = (recipient: string) => org.core.post(`/v1/master-wallets/${wallet.id}/transfer`, { assets: [{ assetId: assets.USDC.id, recipient, amount: '10' }] });

  // Another user with a USDC account (its associated one) and a USDT one.
  const bob = await newRecipient();
  await fundFromSolanaFaucet(devnet.rpcUrl, { to: bob, amount: 1_000_000n, mint: { address: USDC.address, decimals: 6 } });
  const usdt = DEVNET_MINTS.find((m) => m.symbol === 'USDT')!;
  await fundFromSolanaFaucet(devnet.rpcUrl, { to: bob, amount: 1_000_000n, mint: { address: usdt.address, decimals: 6 } });
  const bobUsdc = await ataOf(bob);
  const bobUsdt = await ataOf(bob, address(usdt.address));
  await eventually(async () => (await chain.balance(bob, usdc, 'confirmed')) === 1_000_000n && (await exists(bobUsdt)), 30_000);

  // (a) To bob's USDC account: paid into it, as wallets do; no account is created, no rent charged.
  const paid = await send(bobUsdc);
  expect(paid.status).toBe(201);
  const done = await settled(paid.body.data.id);
  expect(done).toMatchObject({ status: 'CONFIRMED', items: [{ recipient: bobUsdc, amount: '10' }] });
  expect(await chain.balance(bob, usdc, 'final')).toBe(11_000_000n);
  expect(lamports(done.items[0].gasFee)).toBeLessThan(await chain.rpc.getMinimumBalanceForRentExemption(165n).send());
  expect(await exists(await ataOf(bobUsdc))).toBe(false);

  // (b) the wallet's own USDC account, (c) the mint, (d) a token account of another mint: 400 naming the field, nothing sent.
  for (const recipient of [await ataOf(wallet.walletAddress), USDC.address, bobUsdt]) {
    const refused = await send(recipient);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_ADDRESS', details: { fields: [{ field: 'assets.0.recipient', error: 'INVALID_FIELD' }] } });
    expect(await exists(await ataOf(recipient))).toBe(false);
  }
  const estimate = await org.core.post(`/v1/master-wallets/${wallet.id}/transfer/estimate-gas`, { assets: [{ assetId: assets.USDC.id, recipient: USDC.address, amount: '10' }] });
  expect(estimate.status).toBe(400);
  expect(estimate.body.error).toMatchObject({ code: 'INVALID_ADDRESS', details: { fields: [{ field: 'assets.0.recipient', error: 'INVALID_FIELD' }] } });
  expect(await custody(wallet.id, assets.USDC.id)).toBe(90_000_000n);

  // An address off the curve that no token program owns (a multisig's vault) is a wallet: its associated account is created.
  const [vault] = await getProgramDerivedAddress({ programAddress: address('SQDS4ep65T869zMMBKyuUq6aD6EgTu8psMjkvj52pCf'), seeds: ['multisig', 'vault', getAddressEncoder().encode(address(bob))] });
  const toVault = await send(vault);
  expect(toVault.status).toBe(201);
  expect(await settled(toVault.body.data.id)).toMatchObject({ status: 'CONFIRMED' });
  expect(await chain.balance(vault, usdc, 'final')).toBe(10_000_000n);
  expect(await chain.sendable(vault, usdc, 'final')).toBe(10_000_000n);
});

test('from a deposit address through GraphQL; the fee estimate in SOL; a read-only key is refused', async () => {
  const wallet = await solanaWallet();
  const depositAddress = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, { name: 'Customer 7' })).body.data as { id: string; address: string };
  await fund(depositAddress.address, '1');
  await fund(depositAddress.address, '20', 'USDC');
  await fund(wallet.walletAddress, '1');

  // The estimate: a network fee and, to a recipient without a token account, its rent.
  const to = await newRecipient();
  const estimate = await org.core.post(`/v1/master-wallets/${wallet.id}/transfer/estimate-gas`, { assets: [{ assetId: assets.SOL.id, recipient: to, amount: '0.1' }] });
  expect(estimate.status).toBe(200);
  expect(BigInt(estimate.body.data.estimatedFee.value)).toBeGreaterThanOrEqual(5000n);
  expect(estimate.body.data.estimatedFee.amount).toBe((Number(estimate.body.data.estimatedFee.value) / 1e9).toString());

  const readKey = (await org.core.post('/v1/api-keys', { name: 'reader', scopes: ['read'] })).body.data.secret;
  const reader = org.core.with({ apiKey: readKey, orgId: org.orgId });
  expect((await reader.post(`/v1/addresses/${depositAddress.id}/transfer`, { assets: [{ assetId: assets.USDC.id, recipient: to, amount: '1' }] })).status).toBe(403);

  const mutation = `mutation($id: ID!, $input: TransferInput!) { transferFromAddress(id: $id, input: $input) { id status fromAddress items { recipient amount status } } }`;
  const res = await org.core.graphql(mutation, { id: depositAddress.id, input: { assets: [{ assetId: assets.USDC.id, recipient: to, amount: '7.25' }] } });
  expect(res.body.errors).toBeUndefined();
  const sent = res.body.data.transferFromAddress;
  expect(sent).toMatchObject({ status: 'QUEUED', fromAddress: depositAddress.address, items: [{ recipient: to, amount: '7.25', status: 'QUEUED' }] });
  const done = await settled(sent.id);
  expect(done.status).toBe('CONFIRMED');
  expect(await chain.balance(to, { kind: 'token', address: USDC.address, decimals: 6 }, 'final')).toBe(7_250_000n);
  expect(await chain.balance(depositAddress.address, { kind: 'token', address: USDC.address, decimals: 6 }, 'final')).toBe(12_750_000n);
  expect(await custody(depositAddress.id, assets.USDC.id)).toBe(12_750_000n);
  // An invalid address through GraphQL: the same refusal.
  const bad = await org.core.graphql(mutation, { id: depositAddress.id, input: { assets: [{ assetId: assets.USDC.id, recipient: 'nope', amount: '1' }] } });
  expect(bad.body.errors[0].extensions).toMatchObject({ code: 'INVALID_ADDRESS' });
});

test('a transfer the cluster refuses when it is sent fails, is refunded to the custody ledger, and is reported', async () => {
  const wallet = await solanaWallet({ security: { requireApprovalForTransfers: true } });
  await fund(wallet.walletAddress, '1');
  await fund(wallet.walletAddress, '10', 'USDC');
  const to = await newRecipient();
  const held = await org.core.post(`/v1/master-wallets/${wallet.id}/transfer`, { assets: [{ assetId: assets.USDC.id, recipient: to, amount: '6' }] });
  expect(held.body.data.status).toBe('PENDING_APPROVAL');
  expect(await custody(wallet.id, assets.USDC.id)).toBe(4_000_000n);

  // Meanwhile the wallet's USDC leaves on chain by other means (its key used outside Keel).
  const signer = await t.keel.services.sendingWallets.solanaSigner(org.orgId, wallet.id, null);
  const elsewhere = await chain.prepareTransfer(signer, { to: await newRecipient(), asset: { kind: 'token', address: USDC.address, decimals: 6 }, amount: 8_000_000n });
  await chain.broadcast(elsewhere);
  await eventually(async () => (await chain.outcome(elsewhere)).state === 'landed', 20_000);

  expect((await (await anotherAdmin(org)).core.post(`/v1/transfers/${held.body.data.id}/approve`)).body.data.status).toBe('QUEUED');
  const done = await settled(held.body.data.id);
  expect(done.status).toBe('FAILED');
  expect(done.items[0]).toMatchObject({ status: 'FAILED', error: expect.stringMatching(/refused|fail/), gasFee: null });
  // Nothing reached the recipient; the amount is back in the ledger, no fee charged.
  expect(await chain.balance(to, { kind: 'token', address: USDC.address, decimals: 6 }, 'confirmed')).toBe(0n);
  expect(await custody(wallet.id, assets.USDC.id)).toBe(10_000_000n);
  const failed = await eventually(async () => (await t.keel.platform.db('outbox_events').where({ type: 'master.transfer_failed' })).map((r) => r.envelope.data).find((d) => d.transferId === held.body.data.id));
  expect(failed).toMatchObject({ status: 'FAILED', to, amount: '6', error: done.items[0].error });
});

describe('auto-sweep', () => {
  const SOL: ChainAsset = { kind: 'native' };
  const USDC_ASSET: ChainAsset = { kind: 'token', address: USDC.address, decimals: 6 };
  const transfersFrom = (addressId: string) => t.keel.platform.db('transfers').where({ addressId }).orderBy('createdAt');
  const transfersTo = (recipient: string) => t.keel.platform.db('transfers as t').join('transfer_items as i', 'i.transferId', 't.id').where('i.recipient', recipient).select('t.id', 't.kind');

  async function sweepingWallet(): Promise<{ id: string; walletAddress: string }> {
    const res = await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Solana sweeps', configurations: { enableGaslessWithdraw: true, autoSweep: { enabled: true, threshold: '0', destinationAddress: '' } } });
    expect(res.status).toBe(201);
    return res.body.data;
  }

  async function depositAddress(walletId: string): Promise<{ id: string; address: string }> {
    const res = await org.core.post(`/v1/master-wallets/${walletId}/addresses`, { name: 'customer' });
    expect(res.status).toBe(201);
    return res.body.data;
  }

  test('a SOL deposit is swept less its fee: the address is left empty, the master wallet credited on chain and in the ledger', async () => {
    const wallet = await sweepingWallet();
    await fund(wallet.walletAddress, '1');
    const addr = await depositAddress(wallet.id);
    const masterBefore = await chain.balance(wallet.walletAddress, SOL, 'final');

    await fund(addr.address, '2');
    const sweep = await eventually(async () => (await transfersFrom(addr.id))[0], 30_000);
    expect(sweep.kind).toBe('sweep');
    const done = await settled(sweep.id);
    expect(done.status).toBe('CONFIRMED');
    const fee = lamports(done.items[0].gasFee);
    expect(fee).toBeGreaterThanOrEqual(5000n);
    expect(lamports(done.items[0].amount) + fee).toBe(2_000_000_000n);
    expect(await chain.balance(addr.address, SOL, 'final')).toBe(0n);
    expect(await chain.balance(wallet.walletAddress, SOL, 'final')).toBe(masterBefore + 2_000_000_000n - fee);
    await eventually(async () => (await custody(addr.id, assets.SOL.id)) === 0n, 10_000);
    await eventually(async () => (await custody(wallet.id, assets.SOL.id)) === masterBefore + 2_000_000_000n - fee, 10_000);
    expect(await transfersFrom(addr.id)).toHaveLength(1);
  });

  test("a stray token account of the address (anyone may open one for it) with a dust deposit: the dust is credited and stays there; the sweep moves what the associated token account holds and goes through", async () => {
    const wallet = await sweepingWallet();
    await fund(wallet.walletAddress, '2');
    const addr = await depositAddress(wallet.id);

    // Someone opens a token account (not the associated one) owned by the address and sends it 1 base unit.
    const someone = await generateKeyPairSigner();
    await fundFromSolanaFaucet(devnet.rpcUrl, { to: someone.address, amount: 1_000_000_000n });
    await fundFromSolanaFaucet(devnet.rpcUrl, { to: someone.address, amount: 1_000n, mint: { address: USDC.address, decimals: 6 } });
    await eventually(async () => (await chain.balance(someone.address, USDC_ASSET, 'confirmed')) === 1_000n, 30_000);
    const stray = await generateKeyPairSigner();
    const mint = address(USDC.address);
    const [someoneAta] = await findAssociatedTokenPda({ owner: someone.address, mint, tokenProgram: address(TOKEN_PROGRAM) });
    const rent = await chain.rpc.getMinimumBalanceForRentExemption(165n).send();
    const dustTx = await sendInstructions(chain, someone, [
      getCreateAccountInstruction({ payer: someone, newAccount: stray, lamports: rent, space: 165n, programAddress: address(TOKEN_PROGRAM) }),
      getInitializeAccount3Instruction({ account: stray.address, mint, owner: address(addr.address) }),
      getTransferCheckedInstruction({ source: someoneAta, mint, destination: stray.address, authority: someone, amount: 1n, decimals: 6 }),
    ]);
    await eventually(async () => (await t.keel.platform.db('chain_transfers').where({ txHash: dustTx, direction: 'incoming' }).first()) !== undefined, 60_000);
    // Credited (it is the address's); nothing to sweep yet: the associated token account holds nothing, so no top-up is paid.
    await eventually(async () => (await custody(addr.id, assets.USDC.id)) === 1n, 10_000);
    expect(await transfersFrom(addr.id)).toHaveLength(0);
    expect(await transfersTo(addr.address)).toHaveLength(0);

    await fund(addr.address, '25', 'USDC');
    const sweep = await eventually(async () => (await transfersFrom(addr.id))[0], 30_000);
    expect(sweep.kind).toBe('sweep');
    expect(await settled(sweep.id)).toMatchObject({ status: 'CONFIRMED', items: [{ recipient: wallet.walletAddress, amount: '25' }] });
    expect(await chain.balance(wallet.walletAddress, USDC_ASSET, 'final')).toBe(25_000_000n);
    // The dust stays where it was sent, on chain and in the ledger; one sweep, one top-up, nothing due again.
    expect(await chain.balance(addr.address, USDC_ASSET, 'final')).toBe(1n);
    await eventually(async () => (await custody(addr.id, assets.USDC.id)) === 1n && (await custody(wallet.id, assets.USDC.id)) === 25_000_000n, 10_000);
    expect(await transfersFrom(addr.id)).toHaveLength(1);
    expect(await transfersTo(addr.address)).toHaveLength(1);
    await eventually(async () => (await t.keel.platform.db('sweeps_due').where({ addressId: addr.id })).length === 0, 10_000);
  });

  test('autoSweep.destinationAddress takes the wallet\'s family: on Solana an allowed Solana address (compared exactly) is accepted and swept into, an EVM one refused; on EVM a Solana one refused, an EVM one as before', async () => {
    const field = 'configurations.autoSweep.destinationAddress';
    const evmAddress = '0x52908400098527886E0F7030069857D2E4169EE7';
    const collector = await newRecipient();
    const create = (blockchainId: string, destinationAddress: string, allowedRecipients: string[]) =>
      org.core.post('/v1/master-wallets', { blockchainId, name: 'Sweeps elsewhere', configurations: { autoSweep: { enabled: true, threshold: '0', destinationAddress }, security: { allowedRecipients } } });
    const refusedOn = (res: { status: number; body: { error: unknown } }) => {
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ details: { fields: [{ field }] } });
    };

    // An EVM destination on a Solana wallet, even one of its allowed recipients; a Solana one differing
    // from the allowed one only in the case of a letter (another address: base58 is case-sensitive).
    refusedOn(await create(solanaId, evmAddress, [collector, evmAddress]));
    const otherCase = [...collector.split('').keys()]
      .reverse()
      .map((i) => collector.slice(0, i) + swapCase(collector[i]) + collector.slice(i + 1))
      .find((a) => a !== collector && isAddress(a))!;
    refusedOn(await create(solanaId, otherCase, [collector]));

    const wallet = await create(solanaId, collector, [collector]);
    expect(wallet.status).toBe(201);
    expect(wallet.body.data.configurations.autoSweep.destinationAddress).toBe(collector);
    refusedOn(await org.core.request('PATCH', `/v1/master-wallets/${wallet.body.data.id}`, { body: { configurations: { autoSweep: { destinationAddress: evmAddress }, security: { allowedRecipients: [collector, evmAddress] } } } }));
    // Swept into the destination.
    const addr = await depositAddress(wallet.body.data.id);
    await fund(addr.address, '1');
    const sweep = await eventually(async () => (await transfersFrom(addr.id))[0], 30_000);
    const done = await settled(sweep.id);
    expect(done).toMatchObject({ status: 'CONFIRMED', items: [{ recipient: collector }] });
    expect(await chain.balance(collector, SOL, 'final')).toBe(1_000_000_000n - lamports(done.items[0].gasFee));

    // An EVM wallet: a Solana destination refused; an allowed EVM one accepted, written checksummed.
    const evmId = ((await org.core.get('/v1/blockchains')).body.data as { id: string; isEvmCompatible: boolean }[]).find((c) => c.isEvmCompatible)!.id;
    refusedOn(await create(evmId, collector, [collector]));
    const evmWallet = await create(evmId, evmAddress.toLowerCase(), [evmAddress]);
    expect(evmWallet.status).toBe(201);
    expect(evmWallet.body.data.configurations.autoSweep.destinationAddress).toBe(evmAddress);
  });

  // Last in the file: it restarts Keel.
  test('a USDC deposit into an address without SOL: the master wallet tops it up, then it is swept; balances on chain and in the ledger right; swept once across a restart', async () => {
    const wallet = await sweepingWallet();
    await fund(wallet.walletAddress, '2');
    const addr = await depositAddress(wallet.id);
    expect(await chain.balance(addr.address, SOL, 'final')).toBe(0n);

    await fund(addr.address, '25', 'USDC');
    const [topUp, sweep] = await eventually(async () => {
      const rows = await transfersFrom(addr.id);
      const topUps = await transfersTo(addr.address);
      return rows.length === 1 && topUps.length === 1 && [topUps[0], rows[0]];
    }, 30_000);
    expect(topUp.kind).toBe('gas_topup');
    expect(sweep.kind).toBe('sweep');
    const topUpDone = await settled(topUp.id);
    const sweepDone = await settled(sweep.id);
    expect(topUpDone).toMatchObject({ status: 'CONFIRMED', fromAddress: wallet.walletAddress, items: [{ recipient: addr.address }] });
    expect(sweepDone).toMatchObject({ status: 'CONFIRMED', fromAddress: addr.address, items: [{ recipient: wallet.walletAddress, amount: '25' }] });

    // On chain: the USDC moved to the master wallet; the address kept the rest of its top-up in SOL (rent-exempt).
    expect(await chain.balance(addr.address, USDC_ASSET, 'final')).toBe(0n);
    expect(await chain.balance(wallet.walletAddress, USDC_ASSET, 'final')).toBe(25_000_000n);
    const addressSol = await chain.balance(addr.address, SOL, 'final');
    expect(addressSol).toBeGreaterThan(0n);
    // The custody ledger mirrors the chain.
    await eventually(async () => (await custody(addr.id, assets.USDC.id)) === 0n && (await custody(wallet.id, assets.USDC.id)) === 25_000_000n, 10_000);
    await eventually(async () => (await custody(addr.id, assets.SOL.id)) === addressSol, 10_000);
    const masterSol = await chain.balance(wallet.walletAddress, SOL, 'final');
    await eventually(async () => (await custody(wallet.id, assets.SOL.id)) === masterSol, 10_000);
    // The top-up is Keel's own move: not swept back as a SOL deposit.
    expect(await transfersFrom(addr.id)).toHaveLength(1);

    // Across a restart nothing is swept again.
    await t.restart();
    org = { ...org, core: new ApiClient(t.coreUrl, org.core.credentials) };
    await fund(wallet.walletAddress, '0.1');
    expect(await transfersFrom(addr.id)).toHaveLength(1);
    expect(await transfersTo(addr.address)).toHaveLength(1);
    expect(await chain.balance(wallet.walletAddress, USDC_ASSET, 'final')).toBe(25_000_000n);
  });
});
