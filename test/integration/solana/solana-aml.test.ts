/**
 * AML screening of Solana addresses (issue 35) on a real sandbox Solana network: an operator's
 * `sanctioned_addresses_SOL.txt` loaded with `keel aml load` screens Base58 addresses exactly (a
 * case variant is another address; EVM stays case-insensitive) through the check endpoint (REST and
 * GraphQL), and SOL and USDC deposits from a listed sender are flagged and held as EVM ones are,
 * also when a clean account co-signs them (pays the fee, or moves some of the asset too), when an
 * accomplice tops up another token account of the listed sender by as much in the same transaction
 * (senders are counted account by account, never netted per owner), and when the listed sender
 * hands its token account to another owner in the same transaction.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Address, KeyPairSigner, address, generateKeyPairSigner } from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  AuthorityType,
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeAccount3Instruction,
  getSetAuthorityInstruction,
  getTransferCheckedInstruction,
} from '@solana-program/token';
import { SolanaDevnet, startSolanaDevnet } from '../../../src/platform/solana-devnet/devnet';
import { DEVNET_MINTS } from '../../../src/platform/solana-devnet/genesis';
import { fundFromSolanaFaucet } from '../../../src/platform/solana-devnet/faucet';
import { SolanaChain, TOKEN_PROGRAM } from '../../../src/platform/chain-port/solana-chain';
import type { ChainAsset } from '../../../src/platform/chain-port/chain-port';
import { formatChainsConfig, parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { devSolanaSpec } from '../../../src/modules/chains/chain-networks';
import { shippedSanctionsDirectory } from '../../../src/modules/aml/sanctions-files';
import { WalletKeys } from '../../../src/modules/wallets/wallet-keys';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { eventually } from '../../support/eventually';
import { keelCommand } from '../../support/keel-cli';
import { sendInstructions } from './solana-keel';

/** The date a list loaded here carries: the newest there is (one dated later is refused). */
const TODAY = new Date().toISOString().slice(0, 10);

jest.setTimeout(120_000);

const USDC = DEVNET_MINTS.find((m) => m.symbol === 'USDC')!;
const SOL: ChainAsset = { kind: 'native' };
const USDC_ASSET: ChainAsset = { kind: 'token', address: USDC.address, decimals: 6 };
const OFAC_ETH = readFileSync(path.join(shippedSanctionsDirectory(), 'sanctioned_addresses_ETH.txt'), 'utf8').split('\n')[0].trim();

/** The same Base58 address with one letter in the other case (a letter whose other case is Base58 too): another address. */
const caseVariant = (a: string) => a.replace(/[a-hj-km-np-z]/, (c) => c.toUpperCase());

let devnet: SolanaDevnet;
let chain: SolanaChain;
let t: TestKeel;
let org: TestOrg;
let solanaId: string;
let listed: KeyPairSigner;
/** Not listed: only a case variant of its address is. */
let lookalike: KeyPairSigner;

beforeAll(async () => {
  devnet = await startSolanaDevnet({ slotMs: 50, finalizedLag: 16 });
  chain = new SolanaChain({ rpcUrl: devnet.rpcUrl, priorityMicroLamports: 0n });
  t = await startTestKeel({
    KEEL_CHAINS: formatChainsConfig([...parseChainsConfig(process.env.KEEL_CHAINS!), devSolanaSpec(devnet.rpcUrl)]),
    RATE_LIMIT_SCALE: 100,
    CHAIN_POLL_INTERVAL_MS: 100,
    SANCTIONS_REFRESH_INTERVAL_MS: 100,
  });
  org = await t.createOrg();
  solanaId = ((await org.core.get('/v1/blockchains')).body.data as { id: string; isEvmCompatible: boolean }[]).find((c) => !c.isEvmCompatible)!.id;
  [listed, lookalike] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
  for (const s of [listed, lookalike]) {
    await fundFromSolanaFaucet(devnet.rpcUrl, { to: s.address, amount: 5_000_000_000n });
    await fundFromSolanaFaucet(devnet.rpcUrl, { to: s.address, amount: 100_000_000n, mint: { address: USDC.address, decimals: 6 } });
  }
});

afterAll(async () => {
  await t?.stop();
  await devnet?.stop();
});

/** A transfer signed by `from` (an ordinary wallet on the network), once it lands. */
async function send(from: KeyPairSigner, to: string, asset: ChainAsset, amount: bigint): Promise<string> {
  await eventually(async () => (await chain.balance(from.address, asset, 'confirmed')) >= amount, 30_000);
  const prepared = await chain.prepareTransfer(from, { to, asset, amount });
  await chain.broadcast(prepared);
  await eventually(async () => (await chain.outcome(prepared)).state === 'landed', 30_000);
  return prepared.txId;
}

const ata = async (owner: string) => (await findAssociatedTokenPda({ owner: address(owner), mint: address(USDC.address), tokenProgram: address(TOKEN_PROGRAM) }))[0];

const incoming = async (addressId: string, hash: string) => {
  const res = await org.core.get(`/v1/addresses/${addressId}/transactions?direction=incoming`);
  return (res.body.transfer as any[]).find((r) => r.hash === hash);
};

describe('a list of Solana addresses loaded with keel aml load', () => {
  test('screens Base58 exactly through the check endpoint (REST and GraphQL): the listed address is sanctioned, a case variant of it is not; EVM stays case-insensitive', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'keel-aml-sol-'));
    const file = path.join(dir, 'sanctioned_addresses_SOL.txt');
    writeFileSync(file, `# an operator's Solana list\n${listed.address}\n${caseVariant(lookalike.address)}\n`);
    const out = await keelCommand<any>(t.config, ['aml', 'load', file, '--date', TODAY], { KEEL_CHAINS: t.config.KEEL_CHAINS });
    expect(out).toMatchObject({ loaded: { listDate: TODAY }, lists: [{ name: 'SOL', entries: 2 }], inUse: true });
    expect(out.keptFromPrevious).toEqual(expect.arrayContaining(['ETH', 'XBT']));
    await eventually(async () => (await org.core.get('/v1/aml/lists')).body.data.listDate === TODAY, 10_000);

    const asked = [listed.address, caseVariant(listed.address), lookalike.address, caseVariant(lookalike.address), OFAC_ETH.toLowerCase()];
    const res = await org.core.post('/v1/aml/check-batch', { addresses: asked });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: any) => [r.address, r.isSanctioned])).toEqual([
      [listed.address, true],
      [caseVariant(listed.address), false],
      [lookalike.address, false],
      [caseVariant(lookalike.address), true],
      [OFAC_ETH.toLowerCase(), true],
    ]);
    expect(res.body.data[0].identifications).toEqual([expect.objectContaining({ category: 'SANCTIONS', list: 'SOL', listedAddress: listed.address })]);
    expect(res.body.data[1].identifications).toEqual([]);

    const gql = await org.core.graphql('mutation($a: [String!]!) { amlCheckBatch(input: { addresses: $a }) { data { address isSanctioned identifications { list listedAddress } } } }', {
      a: [listed.address, caseVariant(listed.address)],
    });
    expect(gql.body.data.amlCheckBatch.data).toEqual([
      { address: listed.address, isSanctioned: true, identifications: [{ list: 'SOL', listedAddress: listed.address }] },
      { address: caseVariant(listed.address), isSanctioned: false, identifications: [] },
    ]);
  });

  test('SOL and USDC deposits from a listed sender are flagged, announced and held as EVM ones are; a deposit from the look-alike is not', async () => {
    // The wallet sweeps its deposits: the clean one is swept, the flagged ones are held.
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Solana AML', configurations: { enableGaslessWithdraw: true, autoSweep: { enabled: true, threshold: '0', destinationAddress: '' } } })).body.data;
    const tainted = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, { name: 'tainted' })).body.data;
    const clean = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, { name: 'clean' })).body.data;

    const solTx = await send(listed, tainted.address, SOL, 1_000_000_000n);
    const usdcTx = await send(listed, tainted.address, USDC_ASSET, 10_000_000n);
    const cleanTx = await send(lookalike, clean.address, SOL, 1_000_000_000n);

    const sol = await eventually(() => incoming(tainted.id, solTx), 30_000);
    const usdc = await eventually(() => incoming(tainted.id, usdcTx), 30_000);
    const matches = [{ list: 'SOL', address: listed.address }];
    expect(sol.aml).toEqual({ flaggedAt: expect.any(String), releasedAt: null, matches });
    expect(usdc.aml).toEqual({ flaggedAt: expect.any(String), releasedAt: null, matches });
    // The look-alike sender (only its case variant is listed) is clean.
    expect((await eventually(() => incoming(clean.id, cleanTx), 30_000)).aml).toBeNull();

    const events = (await t.keel.platform.db('outbox_events').where({ type: 'address.incoming_transfer_flagged', organizationId: org.orgId })).map((r) => (typeof r.envelope === 'string' ? JSON.parse(r.envelope) : r.envelope));
    expect(events).toHaveLength(2);
    const flaggedEvent = (hash: string, rawValue: string) => ({
      type: 'address.incoming_transfer_flagged',
      data: expect.objectContaining({ hash, from: listed.address, to: tainted.address, rawValue, blockchainId: solanaId, matches, listDate: TODAY, heldFromAutoSweep: true, wallet: { id: tainted.id, walletAddress: tainted.address, masterWalletId: wallet.id } }),
    });
    expect(events).toEqual(expect.arrayContaining([expect.objectContaining(flaggedEvent(solTx, '1000000000')), expect.objectContaining(flaggedEvent(usdcTx, '10000000'))]));

    // Held from auto-sweep: nothing leaves the tainted address (no sweep, no fee top-up); the clean deposit is swept.
    const sweeps = (addressId: string) => t.keel.platform.db('transfers').where({ addressId });
    const cleanSweep = await eventually(async () => (await sweeps(clean.id))[0], 30_000);
    expect(cleanSweep.kind).toBe('sweep');
    await eventually(async () => (await chain.balance(clean.address, SOL, 'final')) === 0n, 30_000);
    expect(await sweeps(tainted.id)).toHaveLength(0);
    expect(await t.keel.platform.db('transfer_items').where({ recipient: tainted.address })).toHaveLength(0);
    expect(await chain.balance(tainted.address, USDC_ASSET, 'final')).toBe(10_000_000n);

    // For review: listed with their amounts; the wallet shows FLAGGED; released as EVM ones are.
    const held = (await org.core.get('/v1/aml/flagged-transfers?released=false')).body.data as any[];
    expect(held.map((h) => [h.hash, h.symbol, h.amount, h.from, h.addressId]).sort()).toEqual(
      [
        [solTx, 'SOL', '1', listed.address, tainted.id],
        [usdcTx, 'USDC', '10', listed.address, tainted.id],
      ].sort(),
    );
    expect((await org.core.get(`/v1/master-wallets/${wallet.id}`)).body.data.configurations.aml).toMatchObject({ status: 'FLAGGED', message: expect.stringContaining('2 incoming transfers') });
    for (const h of held) expect((await org.core.post(`/v1/aml/flagged-transfers/${h.id}/release`, { note: 'reviewed' })).status).toBe(200);
    expect((await org.core.get(`/v1/master-wallets/${wallet.id}`)).body.data.configurations.aml.status).toBe('CLEAR');
  });

  test('a deposit the listed sender makes in a transaction a clean account pays the fee of (and, for USDC, moves 1 base unit in after it, or more than the listed one) is flagged and held: every account the asset left is screened', async () => {
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Solana AML co-signed', configurations: { enableGaslessWithdraw: true, autoSweep: { enabled: true, threshold: '0', destinationAddress: '' } } })).body.data;
    const tainted = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, { name: 'co-signed' })).body.data;
    const clean = await generateKeyPairSigner();
    await fundFromSolanaFaucet(devnet.rpcUrl, { to: clean.address, amount: 1_000_000_000n });
    await fundFromSolanaFaucet(devnet.rpcUrl, { to: clean.address, amount: 1_000_000n, mint: { address: USDC.address, decimals: 6 } });
    await eventually(async () => (await chain.balance(clean.address, USDC_ASSET, 'confirmed')) === 1_000_000n && (await chain.balance(listed.address, USDC_ASSET, 'confirmed')) >= 5_000_000n, 30_000);

    // The clean account pays the fee (index 0); the listed one signs the SOL it sends.
    const solTx = await sendInstructions(chain, clean, [getTransferSolInstruction({ source: listed, destination: address(tainted.address), amount: 1_000_000_000n })]);
    // USDC: the listed sender's 5 USDC, then 1 base unit from the clean account.
    const destination = await ata(tainted.address);
    const usdcTx = await sendInstructions(chain, clean, [
      getCreateAssociatedTokenIdempotentInstruction({ payer: clean, ata: destination, owner: address(tainted.address), mint: address(USDC.address) }),
      getTransferCheckedInstruction({ source: await ata(listed.address), mint: address(USDC.address), destination, authority: listed, amount: 5_000_000n, decimals: 6 }),
      getTransferCheckedInstruction({ source: await ata(clean.address), mint: address(USDC.address), destination, authority: clean, amount: 1n, decimals: 6 }),
    ]);
    // And one where the listed sender's share is the smaller: the clean account is `from`, the listed one screened all the same.
    const smallTx = await sendInstructions(chain, clean, [
      getTransferCheckedInstruction({ source: await ata(clean.address), mint: address(USDC.address), destination, authority: clean, amount: 2n, decimals: 6 }),
      getTransferCheckedInstruction({ source: await ata(listed.address), mint: address(USDC.address), destination, authority: listed, amount: 1n, decimals: 6 }),
    ]);

    const matches = [{ list: 'SOL', address: listed.address }];
    const sol = await eventually(() => incoming(tainted.id, solTx), 30_000);
    const usdc = await eventually(() => incoming(tainted.id, usdcTx), 30_000);
    const small = await eventually(() => incoming(tainted.id, smallTx), 30_000);
    expect(sol).toMatchObject({ from: listed.address, aml: { flaggedAt: expect.any(String), releasedAt: null, matches } });
    expect(usdc).toMatchObject({ from: listed.address, aml: { flaggedAt: expect.any(String), releasedAt: null, matches } });
    expect(small).toMatchObject({ from: clean.address, aml: { flaggedAt: expect.any(String), releasedAt: null, matches } });
    // The clean fee payer only paid the fee: no sender of the SOL; it sent USDC too: a sender of it, after the listed one.
    const senders = async (txHash: string) => (await t.keel.platform.db('chain_transfers').where({ txHash, direction: 'incoming' }).first()) as { fromAddress: string; alsoFrom: string[]; rawValue: string };
    expect(await senders(solTx)).toMatchObject({ fromAddress: listed.address, alsoFrom: [], rawValue: '1000000000' });
    expect(await senders(usdcTx)).toMatchObject({ fromAddress: listed.address, alsoFrom: [clean.address], rawValue: '5000001' });
    expect(await senders(smallTx)).toMatchObject({ fromAddress: clean.address, alsoFrom: [listed.address], rawValue: '3' });

    // Held: nothing leaves the address, no fee top-up.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await t.keel.platform.db('transfers').where({ addressId: tainted.id })).toHaveLength(0);
    expect(await t.keel.platform.db('transfer_items').where({ recipient: tainted.address })).toHaveLength(0);
    expect(await chain.balance(tainted.address, USDC_ASSET, 'final')).toBe(5_000_004n);
  });

  test('a USDC deposit the listed sender pays from one token account while an accomplice tops up another of its token accounts by as much, in the same transaction, is flagged and held: senders are counted account by account, never netted per owner', async () => {
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Solana AML netted', configurations: { enableGaslessWithdraw: true, autoSweep: { enabled: true, threshold: '0', destinationAddress: '' } } })).body.data;
    const tainted = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, { name: 'netted' })).body.data;
    const accomplice = await generateKeyPairSigner();
    await fundFromSolanaFaucet(devnet.rpcUrl, { to: accomplice.address, amount: 1_000_000_000n });
    await fundFromSolanaFaucet(devnet.rpcUrl, { to: accomplice.address, amount: 3_000_000n, mint: { address: USDC.address, decimals: 6 } });
    const mint = address(USDC.address);
    await eventually(async () => (await chain.balance(accomplice.address, USDC_ASSET, 'confirmed')) === 3_000_000n && (await chain.balance(listed.address, USDC_ASSET, 'confirmed')) >= 3_000_000n, 30_000);
    // A second, empty token account of the listed sender (not its associated one).
    const refilled = await generateKeyPairSigner();
    await sendInstructions(chain, listed, [
      getCreateAccountInstruction({ payer: listed, newAccount: refilled, lamports: await chain.rpc.getMinimumBalanceForRentExemption(165n).send(), space: 165, programAddress: address(TOKEN_PROGRAM) }),
      getInitializeAccount3Instruction({ account: refilled.address, mint, owner: listed.address }),
    ]);
    const listedHeld = await chain.balance(listed.address, USDC_ASSET, 'confirmed');

    // The accomplice pays the fee; the listed sender's associated account pays 3 USDC in, the accomplice puts 3 USDC into its other account: its own balance does not move.
    const destination = await ata(tainted.address);
    const txId = await sendInstructions(chain, accomplice, [
      getCreateAssociatedTokenIdempotentInstruction({ payer: accomplice, ata: destination, owner: address(tainted.address), mint }),
      getTransferCheckedInstruction({ source: await ata(listed.address), mint, destination, authority: listed, amount: 3_000_000n, decimals: 6 }),
      getTransferCheckedInstruction({ source: await ata(accomplice.address), mint, destination: refilled.address, authority: accomplice, amount: 3_000_000n, decimals: 6 }),
    ]);

    const matches = [{ list: 'SOL', address: listed.address }];
    expect((await eventually(() => incoming(tainted.id, txId), 30_000)).aml).toEqual({ flaggedAt: expect.any(String), releasedAt: null, matches });
    expect(await chain.balance(listed.address, USDC_ASSET, 'final')).toBe(listedHeld);
    const recorded = (await t.keel.platform.db('chain_transfers').where({ txHash: txId, direction: 'incoming' }).first()) as { fromAddress: string; alsoFrom: string[]; category: string; rawValue: string };
    expect(recorded).toMatchObject({ category: 'erc20', rawValue: '3000000' });
    expect([recorded.fromAddress, ...recorded.alsoFrom].sort()).toEqual([accomplice.address, listed.address].sort());
    // Held: nothing leaves the address.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await t.keel.platform.db('transfers').where({ addressId: tainted.id })).toHaveLength(0);
    expect(await chain.balance(tainted.address, USDC_ASSET, 'final')).toBe(3_000_000n);
  });

  test('a USDC deposit whose listed sender hands its token account to another owner in the same transaction (SetAuthority) is flagged and names it, whoever the new owner is: a stranger, another address of the organisation, the receiving address itself; one the organisation\'s own address co-signs is screened for the listed sender too', async () => {
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Solana AML handed over' })).body.data;
    const tainted = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, { name: 'handed over' })).body.data;
    const sibling = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, { name: 'sibling' })).body.data;
    const stranger = await generateKeyPairSigner();
    const mint = address(USDC.address);
    const destination = await ata(tainted.address);
    const listedAta = await ata(listed.address);
    await eventually(async () => (await chain.balance(listed.address, USDC_ASSET, 'confirmed')) >= 20_000_000n, 30_000);
    const toTainted = (source: Address, authority: KeyPairSigner, amount: bigint) => getTransferCheckedInstruction({ source, mint, destination, authority, amount, decimals: 6 });
    const handOver = (owned: Address, owner: KeyPairSigner, newOwner: string) => getSetAuthorityInstruction({ owned, owner, authorityType: AuthorityType.AccountOwner, newAuthority: address(newOwner) });

    // A second token account of the listed sender (not its associated one), with 5 USDC.
    const second = await generateKeyPairSigner();
    await sendInstructions(chain, listed, [
      getCreateAccountInstruction({ payer: listed, newAccount: second, lamports: await chain.rpc.getMinimumBalanceForRentExemption(165n).send(), space: 165, programAddress: address(TOKEN_PROGRAM) }),
      getInitializeAccount3Instruction({ account: second.address, mint, owner: listed.address }),
      getTransferCheckedInstruction({ source: listedAta, mint, destination: second.address, authority: listed, amount: 5_000_000n, decimals: 6 }),
    ]);
    // 5 USDC in, then the account handed to a stranger; the stranger hands it back (no deposit).
    const toStranger = await sendInstructions(chain, listed, [
      getCreateAssociatedTokenIdempotentInstruction({ payer: listed, ata: destination, owner: address(tainted.address), mint }),
      toTainted(listedAta, listed, 5_000_000n),
      handOver(listedAta, listed, stranger.address),
    ]);
    await sendInstructions(chain, listed, [handOver(listedAta, stranger, listed.address)]);
    // 5 USDC in, then the account handed to another address of the organisation.
    const toSibling = await sendInstructions(chain, listed, [toTainted(listedAta, listed, 5_000_000n), handOver(listedAta, listed, sibling.address)]);
    // The organisation's own address (now holding the listed sender's old account) moves more than the listed sender's 1 base unit.
    const keys = new WalletKeys(t.keel.platform.secretBox);
    const siblingSigner = await keys.solanaSigner(wallet.id, (await t.keel.platform.db('master_wallets').where({ id: wallet.id }).first()).sealedMnemonic, sibling.derivationIndex).finally(() => keys.close());
    const coSigned = await sendInstructions(chain, listed, [toTainted(listedAta, siblingSigner, 2_000_000n), toTainted(second.address, listed, 1n)]);
    // 4.999999 USDC in, then the account handed to the receiving address itself.
    const toItself = await sendInstructions(chain, listed, [toTainted(second.address, listed, 4_999_999n), handOver(second.address, listed, tainted.address)]);

    const matches = [{ list: 'SOL', address: listed.address }];
    const recorded = async (txHash: string) => {
      await eventually(() => incoming(tainted.id, txHash), 30_000);
      return (await t.keel.platform.db('chain_transfers').where({ txHash, direction: 'incoming' }).first()) as { fromAddress: string; alsoFrom: string[]; category: string; rawValue: string; amlMatches: unknown };
    };
    const flagged = (fromAddress: string, alsoFrom: string[], rawValue: string) => ({ fromAddress, alsoFrom, category: 'erc20', rawValue, amlMatches: matches });
    expect(await recorded(toStranger)).toMatchObject(flagged(listed.address, [], '5000000'));
    expect(await recorded(toSibling)).toMatchObject(flagged(listed.address, [], '5000000'));
    expect(await recorded(coSigned)).toMatchObject(flagged(sibling.address, [listed.address], '2000001'));
    expect(await recorded(toItself)).toMatchObject(flagged(listed.address, [], '4999999'));
    expect((await incoming(tainted.id, toStranger)).aml).toEqual({ flaggedAt: expect.any(String), releasedAt: null, matches });
  });
});
