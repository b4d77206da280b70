/**
 * Solana custody through the API (issue 35): a master wallet on a Solana cluster (ed25519 keys at
 * m/44'/501'/i'/0', its mnemonic sealed like an EVM wallet's), 20 deposit addresses, SOL and SPL
 * balances read through the chain port; scopes and cross-organisation access as for EVM.
 */
import { isAddress } from '@solana/kit';
import { SolanaDevnet, startSolanaDevnet } from '../../../src/platform/solana-devnet/devnet';
import { formatChainsConfig, parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { devSolanaSpec } from '../../../src/modules/chains/chain-networks';
import { WalletKeys } from '../../../src/modules/wallets/wallet-keys';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { eventually } from '../../support/eventually';

jest.setTimeout(120_000);

let devnet: SolanaDevnet;
let t: TestKeel;
let org: TestOrg;
let other: TestOrg;
let solanaId: string;

beforeAll(async () => {
  devnet = await startSolanaDevnet({ slotMs: 50, finalizedLag: 4 });
  t = await startTestKeel({ KEEL_CHAINS: formatChainsConfig([...parseChainsConfig(process.env.KEEL_CHAINS!), devSolanaSpec(devnet.rpcUrl)]) });
  [org, other] = [await t.createOrg(), await t.createOrg()];
  solanaId = ((await org.core.get('/v1/blockchains')).body.data as { id: string; isEvmCompatible: boolean }[]).find((c) => !c.isEvmCompatible)!.id;
});

afterAll(async () => {
  await t?.stop();
  await devnet?.stop();
});

test('a master wallet and 20 deposit addresses on Solana: ed25519 addresses at m/44\'/501\'/i\'/0\', balances through the port', async () => {
  const created = await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'Solana treasury', configurations: { enableMultiChain: true } });
  expect(created.status).toBe(201);
  const wallet = created.body.data;
  expect(isAddress(wallet.walletAddress)).toBe(true);
  expect(wallet).toMatchObject({ blockchainId: solanaId, network: 'devnet', blockchain: { chainId: null, tokenStandard: 'SPL' } });
  // A Solana wallet is on its cluster alone, even with enableMultiChain.
  expect(wallet.enabledBlockchains.map((c: { id: string }) => c.id)).toEqual([solanaId]);

  const addresses: { address: string; derivationIndex: number }[] = [];
  for (let i = 0; i < 20; i++) {
    const res = await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, { name: `customer ${i}` });
    expect(res.status).toBe(201);
    addresses.push(res.body.data);
  }
  expect(addresses.map((a) => a.derivationIndex)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  expect(new Set([wallet.walletAddress, ...addresses.map((a) => a.address)]).size).toBe(21);
  // Each is the wallet's sealed mnemonic at m/44'/501'/i'/0' (no xpub is kept: ed25519 has none).
  const row = await t.keel.platform.db('master_wallets').where({ id: wallet.id }).first();
  expect(row.accountXpub).toBeNull();
  expect(row.sealedMnemonic).not.toMatch(/\b[a-z]+ [a-z]+ [a-z]+\b/);
  const keys = new WalletKeys(t.keel.platform.secretBox);
  try {
    expect(await keys.solanaAddressAt(wallet.id, row.sealedMnemonic, 0)).toBe(wallet.walletAddress);
    for (const i of [1, 7, 20]) expect(await keys.solanaAddressAt(wallet.id, row.sealedMnemonic, i)).toBe(addresses[i - 1].address);
  } finally {
    await keys.close();
  }

  // SOL and USDC to the wallet's own address; its balances read them through the chain port.
  for (const [asset, amount] of [['SOL', '1.5'], ['USDC', '10']]) {
    expect((await org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: wallet.walletAddress, asset, amount })).status).toBe(200);
  }
  const balances = await eventually(async () => {
    const res = await org.core.get(`/v1/master-wallets/${wallet.id}/balances`);
    const by = new Map((res.body.data as { asset: { symbol: string }; balance: string }[]).map((b) => [b.asset.symbol, b.balance]));
    return by.get('SOL') === '1.5' && by.get('USDC') === '10' ? res.body.data : undefined;
  });
  expect(balances.map((b: { asset: { symbol: string }; blockchainId: string; rawBalance: string }) => [b.asset.symbol, b.blockchainId, b.rawBalance])).toEqual([
    ['SOL', solanaId, '1500000000'],
    ['USDC', solanaId, '10000000'],
    ['USDT', solanaId, '0'],
  ]);

  // Another organisation sees none of it; a read-only key reads but cannot derive addresses.
  expect((await other.core.get(`/v1/master-wallets/${wallet.id}/balances`)).status).toBe(404);
  expect((await other.core.post(`/v1/master-wallets/${wallet.id}/addresses`, {})).status).toBe(404);
  const reader = org.core.with({ apiKey: (await org.core.post('/v1/api-keys', { name: 'reader', scopes: ['read'] })).body.data.secret, orgId: org.orgId });
  expect((await reader.get(`/v1/master-wallets/${wallet.id}/balances`)).status).toBe(200);
  expect((await reader.post(`/v1/master-wallets/${wallet.id}/addresses`, {})).status).toBe(403);
  expect((await reader.post('/v1/master-wallets', { blockchainId: solanaId, name: 'x' })).status).toBe(403);
});

test('features that stay EVM-only refuse a Solana wallet with INVALID_NETWORK naming them', async () => {
  const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: solanaId, name: 'ops' })).body.data;
  const assets = (await org.core.get(`/v1/assets?blockchainId=${solanaId}`)).body.data as { id: string; symbol: string }[];
  const usdc = assets.find((a) => a.symbol === 'USDC')!;
  const refused = async (res: { status: number; body: { error: { code: string; details?: { feature?: string } } } }, feature: string) => {
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'INVALID_NETWORK', details: { feature } });
  };
  await refused(await org.core.get(`/v1/master-wallets/${wallet.id}/nfts?blockchainId=${solanaId}`), 'NFTs');
  // Payment links take a Solana wallet as solanaSettlementWalletId (test/integration/payments/solana-checkout.test.ts), never as the EVM one.
  const link = await org.core.post('/v1/payment/links', { name: 'sol', currency: 'USD', amount: '5', evmSettlementWalletId: wallet.id });
  expect(link.status).toBe(400);
  expect(link.body.error).toMatchObject({ code: 'INVALID_NETWORK', details: { fields: [{ field: 'evmSettlementWalletId', error: 'INVALID_FIELD' }] } });
  await refused(await org.core.post('/v1/settlement-rules', { masterWalletId: wallet.id, name: 'r', source: { blockchainId: solanaId, assetIds: [usdc.id] }, destination: { blockchainId: solanaId, assetId: usdc.id, address: wallet.walletAddress } }), 'Settlement rules');
  await refused(await org.core.get(`/v1/swaps/quote?fromAssetId=${assets[0].id}&toAssetId=${usdc.id}&amount=1`), 'Swaps');
  await refused(await org.core.post(`/v1/master-wallets/${wallet.id}/sign/message`, { message: 'hello', encoding: 'UTF8' }), 'Signing (messages, typed data, transactions)');
  const agent = (await org.core.post('/v1/agents', { name: 'solana agent' })).body.data;
  await refused(await org.core.post(`/v1/agents/${agent.id}/wallets/create`, { blockchainId: solanaId, masterWalletId: wallet.id }), "Agent wallets (agents' signing)");
});
