/**
 * Asset recovery on Solana (issue 35): what a Keel-held Solana address holds, read from the cluster:
 * SOL, the registered mints, and every mint it holds a token account of (Token and Token-2022: tokens
 * Keel does not know), each token's decimals from its mint and its name and symbol from the registry
 * or else its metadata; a balance sums the owner's accounts of the mint. tokenAddresses filters; a
 * caller's rpcUrl is guarded and must serve the same cluster; errors in the spec's envelope.
 */
import { createHash } from 'node:crypto';
import { Address, AccountRole, Instruction, KeyPairSigner, createSolanaRpc, generateKeyPairSigner, getAddressEncoder, getBase64EncodedWireTransaction, getSignatureFromTransaction } from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeAccount3Instruction,
  getInitializeMint2Instruction,
  getMintToCheckedInstruction,
} from '@solana-program/token';
import { SolanaDevnet, startSolanaDevnet } from '../../../src/platform/solana-devnet/devnet';
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from '../../../src/platform/chain-port/solana-chain';
import { formatChainsConfig, parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { devSolanaSpec } from '../../../src/modules/chains/chain-networks';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { eventually } from '../../support/eventually';
import { ApiClient } from '../../support/api-client';
import { signedTransaction } from '../../support/solana-node';

jest.setTimeout(180_000);

const SOL = 1_000_000_000n;

let devnet: SolanaDevnet;
let t: TestKeel;
let org: TestOrg;
let other: TestOrg;
let solanaId: string;
let creator: KeyPairSigner;

/** Signs and sends instructions (fee payer: the creator) and waits until the cluster confirmed them. */
async function send(instructions: Instruction[]): Promise<void> {
  const rpc = createSolanaRpc(devnet.rpcUrl);
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const tx = await signedTransaction(creator, latest, instructions);
  await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: 'base64' }).send();
  const signature = getSignatureFromTransaction(tx);
  const status = await eventually(async () => {
    const s = (await rpc.getSignatureStatuses([signature]).send()).value[0];
    return s && s.confirmationStatus !== 'processed' ? s : undefined;
  });
  expect(status.err).toBeNull();
}

const borshString = (s: string) => {
  const bytes = new TextEncoder().encode(s);
  const out = new Uint8Array(4 + bytes.length);
  new DataView(out.buffer).setUint32(0, bytes.length, true);
  out.set(bytes, 4);
  return out;
};
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
};

/**
 * A Token-2022 mint carrying its own metadata (the MetadataPointer extension pointing at the mint,
 * then the TokenMetadata extension): the instructions, encoded as the Token-2022 program reads them.
 */
async function token2022MintWithMetadata(mint: KeyPairSigner, decimals: number, name: string, symbol: string): Promise<Instruction[]> {
  const addresses = getAddressEncoder();
  const none = new Uint8Array(32);
  const initializePointer: Instruction = {
    programAddress: TOKEN_2022_PROGRAM,
    accounts: [{ address: mint.address, role: AccountRole.WRITABLE }],
    // MetadataPointerExtension (39), Initialize (0): no authority, the metadata in the mint itself.
    data: concat(new Uint8Array([39, 0]), none, new Uint8Array(addresses.encode(mint.address))),
  };
  const initializeMetadata: Instruction = {
    programAddress: TOKEN_2022_PROGRAM,
    accounts: [
      { address: mint.address, role: AccountRole.WRITABLE },
      { address: creator.address, role: AccountRole.READONLY },
      { address: mint.address, role: AccountRole.READONLY },
      { address: creator.address, role: AccountRole.READONLY_SIGNER, signer: creator } as never,
    ],
    data: concat(createHash('sha256').update('spl_token_metadata_interface:initialize_account').digest().subarray(0, 8), borshString(name), borshString(symbol), borshString('https://example.invalid/t.json')),
  };
  const pointerMintSize = 165n + 1n + 4n + 64n;
  return [
    // Lamports enough for the metadata the program appends (it reallocates the mint itself).
    getCreateAccountInstruction({ payer: creator, newAccount: mint, lamports: SOL / 50n, space: pointerMintSize, programAddress: TOKEN_2022_PROGRAM }),
    initializePointer,
    getInitializeMint2Instruction({ mint: mint.address, decimals, mintAuthority: creator.address }, { programAddress: TOKEN_2022_PROGRAM }),
    initializeMetadata,
  ];
}

beforeAll(async () => {
  devnet = await startSolanaDevnet({ slotMs: 50, finalizedLag: 4 });
  t = await startTestKeel({ KEEL_CHAINS: formatChainsConfig([...parseChainsConfig(process.env.KEEL_CHAINS!), devSolanaSpec(devnet.rpcUrl)]) });
  [org, other] = [await t.createOrg(), await t.createOrg()];
  solanaId = ((await org.core.get('/v1/blockchains')).body.data as { id: string; isEvmCompatible: boolean }[]).find((c) => !c.isEvmCompatible)!.id;
  creator = await generateKeyPairSigner();
  await devnet.fund({ to: creator.address, amount: 10n * SOL });
});

afterAll(async () => {
  await t?.stop();
  await devnet?.stop();
});

interface Token {
  address: string;
  symbol: string;
  name: string;
  decimals: number;
  balance: string;
  logoUrl: string;
}

test('a Solana address: SOL, registered USDC, an unknown SPL mint over two accounts and a Token-2022 mint with metadata, each read from the cluster', async () => {
  const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'recovery' })).body.data;
  const a = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, {})).body.data as { id: string; address: Address };
  const path = `/v1/addresses/${a.id}/recoverable-assets?blockchainId=${solanaId}`;
  const usdc = devnet.mints.find((m) => m.symbol === 'USDC')!;
  const usdt = devnet.mints.find((m) => m.symbol === 'USDT')!;

  // Nothing held yet: SOL 0 and the registered mints at 0.
  const empty = await org.core.get(path);
  expect(empty.status).toBe(200);
  expect(empty.body.data).toEqual({
    native: '0',
    tokens: [
      { address: usdc.address, symbol: 'USDC', name: usdc.name, decimals: 6, balance: '0', logoUrl: '' },
      { address: usdt.address, symbol: 'USDT', name: usdt.name, decimals: 6, balance: '0', logoUrl: '' },
    ],
  });

  for (const [asset, amount] of [['SOL', '0.75'], ['USDC', '12.5']]) {
    expect((await org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: a.address, asset, amount })).status).toBe(200);
  }
  // An SPL mint Keel does not know (3 decimals, no metadata), held in the address's associated token
  // account (1.5) and in a second token account of the address (0.25).
  const spam = await generateKeyPairSigner();
  const second = await generateKeyPairSigner();
  const [spamAta] = await findAssociatedTokenPda({ owner: a.address, mint: spam.address, tokenProgram: TOKEN_PROGRAM });
  await send([
    getCreateAccountInstruction({ payer: creator, newAccount: spam, lamports: SOL / 100n, space: 82n, programAddress: TOKEN_PROGRAM }),
    getInitializeMint2Instruction({ mint: spam.address, decimals: 3, mintAuthority: creator.address }),
    getCreateAssociatedTokenIdempotentInstruction({ payer: creator, ata: spamAta, owner: a.address, mint: spam.address }),
    getMintToCheckedInstruction({ mint: spam.address, token: spamAta, mintAuthority: creator, amount: 1_500n, decimals: 3 }),
    getCreateAccountInstruction({ payer: creator, newAccount: second, lamports: SOL / 100n, space: 165n, programAddress: TOKEN_PROGRAM }),
    getInitializeAccount3Instruction({ account: second.address, mint: spam.address, owner: a.address }),
    getMintToCheckedInstruction({ mint: spam.address, token: second.address, mintAuthority: creator, amount: 250n, decimals: 3 }),
  ]);
  // A Token-2022 mint with its own metadata (2 decimals), 42.07 of it in the address's associated account.
  const named = await generateKeyPairSigner();
  const [namedAta] = await findAssociatedTokenPda({ owner: a.address, mint: named.address, tokenProgram: TOKEN_2022_PROGRAM });
  await send([
    ...(await token2022MintWithMetadata(named, 2, 'Stray Token', 'STRAY')),
    getCreateAssociatedTokenIdempotentInstruction({ payer: creator, ata: namedAta, owner: a.address, mint: named.address, tokenProgram: TOKEN_2022_PROGRAM }),
    getMintToCheckedInstruction({ mint: named.address, token: namedAta, mintAuthority: creator, amount: 4_207n, decimals: 2 }, { programAddress: TOKEN_2022_PROGRAM }),
  ]);

  const all = await eventually(async () => {
    const res = await org.core.get(path);
    return res.body.data?.native === '0.75' && res.body.data.tokens[0].balance === '12.5' ? res : undefined;
  });
  expect(all.status).toBe(200);
  // Registered mints first (registry order), then those held that Keel does not know (by mint address).
  const unknown = [
    { address: spam.address, symbol: '', name: '', decimals: 3, balance: '1.75', logoUrl: '' },
    { address: named.address, symbol: 'STRAY', name: 'Stray Token', decimals: 2, balance: '42.07', logoUrl: '' },
  ].sort((x, y) => (x.address < y.address ? -1 : 1));
  expect(all.body.data.tokens).toEqual([
    { address: usdc.address, symbol: 'USDC', name: usdc.name, decimals: 6, balance: '12.5', logoUrl: '' },
    { address: usdt.address, symbol: 'USDT', name: usdt.name, decimals: 6, balance: '0', logoUrl: '' },
    ...unknown,
  ]);

  // tokenAddresses: exactly those, in the order given, once each.
  const some = await org.core.get(`${path}&tokenAddresses=${named.address},${usdc.address}, ${named.address}`);
  expect(some.status).toBe(200);
  expect(some.body.data.native).toBe('0.75');
  expect(some.body.data.tokens.map((tk: Token) => [tk.address, tk.balance])).toEqual([
    [named.address, '42.07'],
    [usdc.address, '12.5'],
  ]);
  // A mint the address holds none of: listed at 0 with its own facts.
  const notHeld = await org.core.get(`${path}&tokenAddresses=${usdt.address}`);
  expect(notHeld.body.data.tokens).toEqual([{ address: usdt.address, symbol: 'USDT', name: usdt.name, decimals: 6, balance: '0', logoUrl: '' }]);

  // A read-only key reads it; another organisation's key does not see the address.
  const reader = org.core.with({ apiKey: (await org.core.post('/v1/api-keys', { name: 'reader', scopes: ['read'] })).body.data.secret, orgId: org.orgId });
  const read = await reader.get(path);
  expect(read.status).toBe(200);
  expect(read.body.data).toEqual(all.body.data);
  const foreign = await other.core.get(`${path}&tokenAddresses=not-a-mint`);
  expect(foreign.status).toBe(404);
  expect(foreign.body.error.code).toBe('NOT_FOUND');
});

test('tokenAddresses that are not mints, and a caller\'s rpcUrl, are refused in the error envelope', async () => {
  const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'recovery checks' })).body.data;
  const a = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, {})).body.data as { id: string; address: string };
  const path = `/v1/addresses/${a.id}/recoverable-assets?blockchainId=${solanaId}`;
  const refused = async (query: string, code: string, status: number) => {
    const res = await org.core.get(`${path}&${query}`);
    expect({ status: res.status, code: res.body.error?.code }).toEqual({ status, code });
    return res.body.error;
  };
  // Not base58 (0, O, I and l are not in its alphabet), an EVM address, and an account that is not a mint.
  for (const bad of ['0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl', '0x6B175474E89094C44Da98b954EedeAC495271d0F']) {
    const error = await refused(`tokenAddresses=${bad}`, 'INVALID_ADDRESS', 400);
    expect(error.message).toContain('Solana mint address');
    expect(error.details).toMatchObject({ field: 'tokenAddresses' });
  }
  expect((await refused(`tokenAddresses=${a.address}`, 'INVALID_ADDRESS', 400)).message).toMatch(/not an SPL token mint/);
  expect((await refused(`tokenAddresses=${Array.from({ length: 51 }, () => a.address).join(',')}`, 'INVALID_FIELD', 422))).toBeDefined();

  // A loopback rpcUrl is refused by the outbound guard (RECOVERY_RPC_ALLOW_PRIVATE_URLS is off).
  const privateUrl = await refused(`rpcUrl=${encodeURIComponent(devnet.rpcUrl)}`, 'INVALID_FIELD', 422);
  expect(privateUrl.details.fields[0].field).toBe('rpcUrl');
});

test('a caller\'s rpcUrl must serve the same cluster; a node that does not answer is UPSTREAM_ERROR', async () => {
  await t.restart({ RECOVERY_RPC_ALLOW_PRIVATE_URLS: true });
  org = { ...org, core: new ApiClient(t.coreUrl, org.core.credentials) };
  const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'recovery rpc' })).body.data;
  const a = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, {})).body.data as { id: string; address: Address };
  const path = `/v1/addresses/${a.id}/recoverable-assets?blockchainId=${solanaId}`;
  // More lamports than a double holds exactly (2^53): each path must read the integer as it is.
  await devnet.fund({ to: a.address, amount: 10_000_000n * SOL + SOL / 4n + 1n });
  const configured = await eventually(async () => {
    const res = await org.core.get(path);
    return res.body.data?.native === '10000000.250000001' ? res : undefined;
  });

  // The cluster's own node as the caller's URL (its genesis hash is the configured cluster's): the same answer.
  const same = await org.core.get(`${path}&rpcUrl=${encodeURIComponent(devnet.rpcUrl)}`);
  expect(same.status).toBe(200);
  expect(same.body.data).toEqual(configured.body.data);
  // An EVM node answers no getGenesisHash: not a node of this cluster.
  const evmNode = parseChainsConfig(process.env.KEEL_CHAINS!)[0].rpcUrl;
  const evm = await org.core.get(`${path}&rpcUrl=${encodeURIComponent(evmNode)}`);
  expect(evm.status).toBe(422);
  expect(evm.body.error.details.fields[0]).toMatchObject({ field: 'rpcUrl' });

  // The cluster's node gone: 502 UPSTREAM_ERROR in the envelope, never a 500.
  await devnet.stop();
  const down = await org.core.get(path);
  expect(down.status).toBe(502);
  expect(down.body.error.code).toBe('UPSTREAM_ERROR');
});
