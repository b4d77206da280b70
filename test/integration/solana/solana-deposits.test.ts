/**
 * Solana deposits through the API (issue 35): SOL and SPL transfers into watched addresses are read
 * through the chain port's scan, recorded once their slot is finalized by the deposits
 * module's one recorder (exactly once, the spec's address.* / master.incoming_transfer data with the
 * mint as raw contract), delivered to a webhook receiver; a deposit in a slot rolled back before
 * finality is never credited; a mint Keel does not list is not recorded; a restart changes nothing;
 * SOL sent to a token account of a deposit address, rather than to the address, is no deposit; SOL
 * that leaves a token account a watched address owns, by a transaction the address did not sign, is
 * neither sent by the address nor taken from its custody.
 */
import { Address, generateKeyPairSigner } from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import { AuthorityType, findAssociatedTokenPda, getCloseAccountInstruction, getInitializeAccount3Instruction, getSetAuthorityInstruction } from '@solana-program/token';
import { SolanaDevnet, startSolanaDevnet } from '../../../src/platform/solana-devnet/devnet';
import { DEVNET_MINTS } from '../../../src/platform/solana-devnet/genesis';
import { fundFromSolanaFaucet } from '../../../src/platform/solana-devnet/faucet';
import { formatChainsConfig, parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { devSolanaSpec } from '../../../src/modules/chains/chain-networks';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { ApiClient } from '../../support/api-client';
import { eventually } from '../../support/eventually';
import { WebhookReceiver } from '../../support/webhook-receiver';
import { TOKEN_PROGRAM } from '../../../src/platform/chain-port/solana-chain';
import { sendInstructions } from './solana-keel';

jest.setTimeout(120_000);

const USDC = DEVNET_MINTS.find((m) => m.symbol === 'USDC')!;
const USDT = DEVNET_MINTS.find((m) => m.symbol === 'USDT')!;
let devnet: SolanaDevnet;
let t: TestKeel;
let org: TestOrg;
let solanaId: string;
const receiver = new WebhookReceiver();

/** The receiver's events of a type, one per event id (a redelivery would repeat an id). */
function received(type: string): { id: string; type: string; data: any }[] {
  return receiver.requests.map((r) => JSON.parse(r.body)).filter((e) => e.type === type);
}

async function transfers(where: Record<string, unknown>) {
  return t.keel.platform.db('chain_transfers').where({ blockchainId: solanaId, ...where }).orderBy('createdAt');
}

beforeAll(async () => {
  devnet = await startSolanaDevnet({ slotMs: 50, finalizedLag: 16 });
  // Keel lists USDC only: USDT on this network is a mint it does not know.
  const spec = { ...devSolanaSpec(devnet.rpcUrl), tokens: devSolanaSpec(devnet.rpcUrl).tokens.filter((m) => m.symbol === 'USDC') };
  t = await startTestKeel({
    KEEL_CHAINS: formatChainsConfig([...parseChainsConfig(process.env.KEEL_CHAINS!), spec]),
    RATE_LIMIT_SCALE: 100,
    CHAIN_POLL_INTERVAL_MS: 100,
    OUTBOX_POLL_INTERVAL_MS: 20,
    WEBHOOKS_ALLOW_PRIVATE_URLS: true,
  });
  org = await t.createOrg();
  solanaId = ((await org.core.get('/v1/blockchains')).body.data as { id: string; isEvmCompatible: boolean }[]).find((c) => !c.isEvmCompatible)!.id;
  expect((await org.core.post('/v1/webhooks', { url: await receiver.start(), name: 'solana', eventTypes: ['*'] })).status).toBe(201);
});

afterAll(async () => {
  await t?.stop();
  await devnet?.stop();
  await receiver.stop();
});

test('SOL and USDC deposits are credited once at finalized with the spec\'s event data; an unlisted mint is not recorded; a rolled-back slot credits nothing; a restart keeps it all', async () => {
  const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Solana deposits' })).body.data;
  const address = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, { name: 'Customer 1' })).body.data;
  const faucet = (body: Record<string, string>) => org.core.post('/v1/dev/faucet', { blockchainId: solanaId, ...body }).then((r) => (expect(r.status).toBe(200), r.body.data as { txHash: string }));

  const sol = await faucet({ address: address.address, amount: '2' });
  const usdc = await faucet({ address: address.address, asset: 'USDC', amount: '25.5' });
  const master = await faucet({ address: wallet.walletAddress, asset: 'USDC', amount: '3' });
  // USDT: a real SPL transfer of a mint Keel does not list.
  const usdt = await fundFromSolanaFaucet(devnet.rpcUrl, { to: address.address, amount: 4_000_000n, mint: { address: USDT.address, decimals: 6 } });

  await eventually(async () => (await transfers({ direction: 'incoming' })).length === 3, 30_000);
  const rows = await transfers({ direction: 'incoming' });
  expect(rows.map((r) => [r.txHash, r.status, r.rawValue])).toEqual(
    expect.arrayContaining([
      [sol.txHash, 'CONFIRMED', '2000000000'],
      [usdc.txHash, 'CONFIRMED', '25500000'],
      [master.txHash, 'CONFIRMED', '3000000'],
    ]),
  );
  // Recorded only once its slot was finalized.
  for (const r of rows) expect(Number(r.blockNumber)).toBeLessThanOrEqual(devnet.slot('finalized'));
  expect(rows.some((r) => r.txHash === usdt)).toBe(false);

  const events = await eventually(async () => {
    const addressEvents = received('address.incoming_transfer');
    return addressEvents.length >= 2 && received('master.incoming_transfer').length >= 1 ? addressEvents : undefined;
  });
  const usdcEvent = events.find((e) => e.data.hash === usdc.txHash)!;
  expect(usdcEvent.data).toEqual({
    id: expect.any(String),
    hash: usdc.txHash,
    logIndex: expect.any(Number),
    blockNumber: expect.stringMatching(/^\d+$/),
    blockHash: expect.any(String),
    // Minted by the faucet: no account's balance of the mint fell, so there is no sender.
    from: '',
    to: address.address,
    value: '25.5',
    category: 'erc20',
    asset: { id: expect.any(String), symbol: 'USDC', decimals: 6 },
    blockchain: { id: solanaId, name: 'Keel Solana Devnet', slug: 'solana-devnet' },
    wallet: { id: address.id, name: 'Customer 1', walletAddress: address.address, masterWalletId: wallet.id },
    rawContract: { address: USDC.address, decimals: 6, rawValue: '25500000' },
  });
  expect(events.find((e) => e.data.hash === sol.txHash)!.data).toMatchObject({ from: devnet.faucet, value: '2', category: 'external', asset: { symbol: 'SOL', decimals: 9 }, rawContract: { address: '11111111111111111111111111111111', decimals: 9, rawValue: '2000000000' } });
  expect(received('master.incoming_transfer').find((e) => e.data.hash === master.txHash)!.data).toMatchObject({ to: wallet.walletAddress, value: '3', wallet: { id: wallet.id, masterWalletId: wallet.id } });

  // The history API shows them (the deposit address: SOL and USDC).
  const history = await org.core.get(`/v1/addresses/${address.id}/transactions?sort=ASC`);
  expect(history.body.totalCount).toBe(2);

  // A deposit whose slot is rolled back before finality: never credited.
  const lost = await faucet({ address: address.address, amount: '7' });
  const rpc = new ApiClient(devnet.rpcUrl, {});
  const statusOf = async () => (await rpc.post('/', { jsonrpc: '2.0', id: 1, method: 'getSignatureStatuses', params: [[lost.txHash]] })).body.result.value[0];
  const landed = (await statusOf()).slot as number;
  expect(landed).toBeGreaterThan(devnet.slot('finalized'));
  // Back to the newest block before the one it landed in.
  for (let slot = landed - 1; ; slot--) {
    try {
      devnet.rollback(slot);
      break;
    } catch (e) {
      if (!/has no block/.test((e as Error).message)) throw e;
    }
  }
  expect(await statusOf()).toBeNull();
  const after = devnet.slot('processed');
  await eventually(async () => (await t.keel.platform.db('chain_cursors').where({ blockchainId: solanaId }).first())?.blockNumber >= after, 30_000);
  expect(await transfers({ txHash: lost.txHash })).toEqual([]);
  expect(received('address.incoming_transfer').some((e) => e.data.hash === lost.txHash)).toBe(false);

  // Exactly once: many scans later, still one row and one event per deposit.
  expect((await transfers({ direction: 'incoming' })).length).toBe(3);
  expect(new Set(received('address.incoming_transfer').map((e) => e.data.id)).size).toBe(2);

  // The custody ledger credited each once (the deposits module's listeners, as for EVM).
  const custody = async () => new Map((await t.keel.platform.db('ledger_balances').where({ walletId: address.id, account: 'custody' })).map((b) => [b.assetId, String(b.available)]));
  const usdcAsset = rows.find((r) => r.txHash === usdc.txHash)!.assetId;
  const solAsset = rows.find((r) => r.txHash === sol.txHash)!.assetId;
  expect(Object.fromEntries(await custody())).toEqual({ [usdcAsset]: '25500000', [solAsset]: '2000000000' });

  // A restart: the same deposits, no second credit; a new deposit is credited once.
  await t.restart();
  org = { ...org, core: new ApiClient(t.coreUrl, org.core.credentials) };
  const next = await org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: address.address, asset: 'USDC', amount: '1' });
  await eventually(async () => (await transfers({ direction: 'incoming' })).length === 4, 30_000);
  expect((await transfers({ txHash: next.body.data.txHash })).length).toBe(1);
  expect(Object.fromEntries(await custody())).toEqual({ [usdcAsset]: '26500000', [solAsset]: '2000000000' });
  const balances = (await org.core.get(`/v1/master-wallets/${wallet.id}/balances`)).body.data as { asset: { symbol: string }; balance: string }[];
  expect(balances.find((b) => b.asset.symbol === 'USDC')!.balance).toBe('3');
  const unrelated = await generateKeyPairSigner();
  expect(await t.keel.services.networks.solana(solanaId)!.port.balance(unrelated.address, { kind: 'native' })).toBe(0n);
});

test("SOL sent to a token account of a deposit address (its USDC account), not to the address, is no deposit: neither SOL nor USDC is recorded or credited, only the address's own SOL is", async () => {
  const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Solana token accounts' })).body.data;
  const address = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, { name: 'Customer 2' })).body.data;
  const usdc = (await org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: address.address, asset: 'USDC', amount: '5' })).body.data;
  await eventually(async () => (await transfers({ txHash: usdc.txHash })).length === 1, 30_000);
  const [tokenAccount] = await findAssociatedTokenPda({ owner: address.address as Address, mint: USDC.address as Address, tokenProgram: TOKEN_PROGRAM });

  // One transaction: 0.5 SOL into the address's USDC account, 0.1 SOL into the address itself.
  const port = t.keel.services.networks.solana(solanaId)!.port;
  const sender = await generateKeyPairSigner();
  await fundFromSolanaFaucet(devnet.rpcUrl, { to: sender.address, amount: 2_000_000_000n });
  await eventually(async () => (await port.balance(sender.address, { kind: 'native' }, 'confirmed')) > 0n, 30_000);
  const tx = await sendInstructions(port, sender, [
    getTransferSolInstruction({ source: sender, destination: tokenAccount, amount: 500_000_000n }),
    getTransferSolInstruction({ source: sender, destination: address.address as Address, amount: 100_000_000n }),
  ]);
  // The token account holds the SOL on chain; the address's SOL and USDC balances are their own.
  expect(await port.balance(tokenAccount, { kind: 'native' }, 'confirmed')).toBeGreaterThan(500_000_000n);
  expect(await port.balance(address.address, { kind: 'native' }, 'confirmed')).toBe(100_000_000n);

  await eventually(async () => (await transfers({ txHash: tx })).length > 0, 30_000);
  const after = devnet.slot('finalized');
  await eventually(async () => (await t.keel.platform.db('chain_cursors').where({ blockchainId: solanaId }).first())?.blockNumber >= after, 30_000);
  const rows = await transfers({ txHash: tx });
  const solAsset = (await org.core.get(`/v1/assets?blockchainId=${solanaId}&symbol=SOL`)).body.data[0].id;
  expect(rows.map((r) => [r.direction, r.toAddress, r.assetId, r.rawValue])).toEqual([['incoming', address.address, solAsset, '100000000']]);
  const custody = new Map((await t.keel.platform.db('ledger_balances').where({ walletId: address.id, account: 'custody' })).map((b) => [b.assetId, String(b.available)]));
  expect(Object.fromEntries(custody)).toEqual({ [rows[0].assetId]: '100000000', [(await transfers({ txHash: usdc.txHash }))[0].assetId]: '5000000' });
});

test("SOL in a token account handed to a watched address and closed by another close authority is not the address's: it is neither sent by it nor debited from its custody, whoever it is closed into (the attacker's deposit address at Keel, or another address of the victim's organisation)", async () => {
  const port = t.keel.services.networks.solana(solanaId)!.port;
  // The victim: an organisation's deposit address W holding 1 SOL credited to its custody, and another address V of it.
  const victimWallet = (await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Solana victim' })).body.data;
  const victim = (await org.core.post(`/v1/master-wallets/${victimWallet.id}/addresses`, { name: 'W' })).body.data;
  const sibling = (await org.core.post(`/v1/master-wallets/${victimWallet.id}/addresses`, { name: 'V' })).body.data;
  const funded = (await org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: victim.address, amount: '1' })).body.data;
  await eventually(async () => (await transfers({ txHash: funded.txHash })).length === 1, 30_000);
  const solAsset = (await transfers({ txHash: funded.txHash }))[0].assetId as string;
  const custody = async (walletId: string) => String((await t.keel.platform.db('ledger_balances').where({ walletId, assetId: solAsset, account: 'custody' }).first())?.available ?? '0');
  expect(await custody(victim.id)).toBe('1000000000');

  // The attacker: an organisation of its own at Keel with a deposit address D, and a key outside Keel.
  const attackerOrg = await t.createOrg();
  const attackerWallet = (await attackerOrg.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Solana attacker' })).body.data;
  const deposit = (await attackerOrg.core.post(`/v1/master-wallets/${attackerWallet.id}/addresses`, { name: 'D' })).body.data;
  const attacker = await generateKeyPairSigner();
  await fundFromSolanaFaucet(devnet.rpcUrl, { to: attacker.address, amount: 10_000_000_000n });
  await eventually(async () => (await port.balance(attacker.address, { kind: 'native' }, 'confirmed')) > 0n, 30_000);

  // Signed by the attacker alone: token accounts it closes as their close authority, handed to W, with 2 SOL in each.
  const rent = await port.rpc.getMinimumBalanceForRentExemption(165n).send();
  const handedToVictim = async () => {
    const account = await generateKeyPairSigner();
    await sendInstructions(port, attacker, [
      getCreateAccountInstruction({ payer: attacker, newAccount: account, lamports: rent, space: 165, programAddress: TOKEN_PROGRAM as Address }),
      getInitializeAccount3Instruction({ account: account.address, mint: USDC.address as Address, owner: attacker.address }),
      getSetAuthorityInstruction({ owned: account.address, owner: attacker, authorityType: AuthorityType.CloseAccount, newAuthority: attacker.address }),
      getSetAuthorityInstruction({ owned: account.address, owner: attacker, authorityType: AuthorityType.AccountOwner, newAuthority: victim.address as Address }),
      getTransferSolInstruction({ source: attacker, destination: account.address, amount: 2_000_000_000n }),
    ]);
    return account.address;
  };
  const [intoAttacker, intoSibling] = [await handedToVictim(), await handedToVictim()];
  const closeInto = (account: Address, destination: string) => sendInstructions(port, attacker, [getCloseAccountInstruction({ account, destination: destination as Address, owner: attacker })]);
  const toAttacker = await closeInto(intoAttacker, deposit.address);
  const toSibling = await closeInto(intoSibling, sibling.address);

  await eventually(async () => (await transfers({ txHash: toAttacker })).length > 0 && (await transfers({ txHash: toSibling })).length > 0, 30_000);
  const after = devnet.slot('finalized');
  await eventually(async () => (await t.keel.platform.db('chain_cursors').where({ blockchainId: solanaId }).first())?.blockNumber >= after, 30_000);
  // Each a deposit into its receiver from the token account it was closed from, an outsider's: external (screened, swept).
  const recorded = async (txHash: string) => (await transfers({ txHash })).map((r) => ({ direction: r.direction, organizationId: r.organizationId, fromAddress: r.fromAddress, toAddress: r.toAddress, category: r.category, rawValue: r.rawValue }));
  const closed = String(rent + 2_000_000_000n);
  expect(await recorded(toAttacker)).toEqual([{ direction: 'incoming', organizationId: attackerOrg.orgId, fromAddress: intoAttacker, toAddress: deposit.address, category: 'external', rawValue: closed }]);
  expect(await recorded(toSibling)).toEqual([{ direction: 'incoming', organizationId: org.orgId, fromAddress: intoSibling, toAddress: sibling.address, category: 'external', rawValue: closed }]);
  // W's SOL never moved: its custody is what it was, it owes nothing, and it can spend it.
  expect(await port.balance(victim.address, { kind: 'native' }, 'confirmed')).toBe(1_000_000_000n);
  expect(await custody(victim.id)).toBe('1000000000');
  expect(await t.keel.platform.db('wallet_debts').where({ walletId: victim.id })).toEqual([]);
  expect(await transfers({ direction: 'outgoing', addressId: victim.id })).toEqual([]);
  expect(await custody(deposit.id)).toBe(closed);
  expect(await custody(sibling.id)).toBe(closed);
});
