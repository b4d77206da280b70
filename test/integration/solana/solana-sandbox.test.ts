/**
 * In sandbox (no KEEL_CHAINS) Keel starts its own Solana network beside the EVM dev chains, registers
 * it as a Solana cluster, and funds SOL, USDC and USDT on it through /v1/dev/faucet and
 * `keel dev fund`; its state (and so every balance) survives a Keel restart (the journal in KEEL_DATA_DIR).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSigner } from '@solana/kit';
import { SolanaChain } from '../../../src/platform/chain-port/solana-chain';
import { DEVNET_MINTS } from '../../../src/platform/solana-devnet/genesis';
import { startTestKeel, TestKeel, TestOrg } from '../../support/keel';
import { ApiClient } from '../../support/api-client';
import { keelCommand } from '../../support/keel-cli';
import { eventually } from '../../support/eventually';

jest.setTimeout(120_000);

const USDC = DEVNET_MINTS.find((m) => m.symbol === 'USDC')!;
const USDT = DEVNET_MINTS.find((m) => m.symbol === 'USDT')!;
let t: TestKeel;
let org: TestOrg;
let solanaId: string;
let port: () => SolanaChain;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'keel-solana-sandbox-'));
  t = await startTestKeel({ KEEL_CHAINS: '', KEEL_DATA_DIR: dataDir, DEV_CHAIN_IDS: [31771], DEV_CHAIN_PORT: 0, DEV_CHAIN_BLOCK_INTERVAL_MS: 500, DEV_SOLANA_SLOT_MS: 50, DEV_SOLANA_FINALIZED_LAG: 4 });
  org = await t.createOrg();
  const chains = (await org.core.get('/v1/blockchains')).body.data as { id: string; isEvmCompatible: boolean }[];
  solanaId = chains.find((c) => !c.isEvmCompatible)!.id;
  port = () => t.keel.services.networks.solana(solanaId)!.port;
});

afterAll(() => t?.stop());

test('the sandbox runs a Solana network of its own on loopback, registered beside the dev chain', async () => {
  const chains = (await org.core.get('/v1/blockchains')).body.data as Record<string, unknown>[];
  expect(chains.map((c) => [c.slug, c.chainId, c.network, c.tokenStandard])).toEqual([
    ['dev-31771', 31771, 'devnet', 'ERC20'],
    ['solana-devnet', null, 'devnet', 'SPL'],
  ]);
  const devnet = t.keel.services.networks.startedSolanaDevnet!;
  expect(devnet.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(t.keel.services.networks.solana(solanaId)!.spec.rpcUrl).toBe(devnet.rpcUrl);
  expect(await port().height('final')).toBeGreaterThanOrEqual(0);
});

test('/v1/dev/faucet funds SOL and USDC on it, and `keel dev fund` USDT; a bad address is refused', async () => {
  const to = (await generateKeyPairSigner()).address;
  const sol = await org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: to, amount: '2.5' });
  expect(sol.status).toBe(200);
  expect(sol.body.data).toMatchObject({ blockchainId: solanaId, symbol: 'SOL', to, amount: '2.5', tokenId: null });
  expect(sol.body.data.txHash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  const usdc = await org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: to, asset: 'USDC', amount: '100.25' });
  expect(usdc.status).toBe(200);
  expect(usdc.body.data).toMatchObject({ symbol: 'USDC', amount: '100.25' });
  const usdt = await keelCommand(t.config, ['dev', 'fund', '--blockchain', 'solana-devnet', '--address', to, '--asset', 'USDT', '--amount', '7']);
  expect(usdt).toMatchObject({ blockchainId: solanaId, symbol: 'USDT', amount: '7' });

  await eventually(async () => (await port().balance(to, { kind: 'native' }, 'final')) === 2_500_000_000n);
  await eventually(async () => (await port().balance(to, { kind: 'token', address: USDC.address, decimals: 6 }, 'final')) === 100_250_000n);
  await eventually(async () => (await port().balance(to, { kind: 'token', address: USDT.address, decimals: 6 }, 'final')) === 7_000_000n);

  const bad = await org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: '0x0000000000000000000000000000000000000001', amount: '1' });
  expect(bad.status).toBe(400);
  expect(bad.body.error.code).toBe('INVALID_ADDRESS');
  const unknown = await org.core.post('/v1/dev/faucet', { blockchainId: solanaId, address: to, asset: 'DAI', amount: '1' });
  expect(unknown.status).toBe(422);

  // A restart replays the network's journal: the same cluster, the same balances.
  await t.restart();
  org = { ...org, core: new ApiClient(t.coreUrl, org.core.credentials) };
  const again = (await org.core.get('/v1/blockchains')).body.data as { id: string; isEvmCompatible: boolean }[];
  expect(again.filter((c) => !c.isEvmCompatible).map((c) => c.id)).toEqual([solanaId]);
  expect(t.keel.services.networks.startedSolanaDevnet!.history).toBe('restored');
  expect(await port().balance(to, { kind: 'native' }, 'final')).toBe(2_500_000_000n);
  expect(await port().balance(to, { kind: 'token', address: USDC.address, decimals: 6 }, 'final')).toBe(100_250_000n);
  expect(await port().balance(to, { kind: 'token', address: USDT.address, decimals: 6 }, 'final')).toBe(7_000_000n);
});
