import { Writable } from 'node:stream';
import { ethers } from 'ethers';
import { startTestKeel, TestOrg } from '../../support/keel';
import { useTestKeel } from '../../support/use-test-keel';
import { createLogger } from '../../../src/platform/logger';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { fundFromFaucet } from '../../../src/platform/chain/faucet';
import { parseChainsConfig } from '../../../src/modules/chains/chain-config';
import { MasterWalletModel } from '../../../src/modules/wallets/wallet.model';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { eventually } from '../../support/eventually';
import { mine } from '../../support/chain-controls';

/** Everything the service logged, to prove no secret ever reaches a log line. */
const logLines: string[] = [];
const logSink = new Writable({
  write(chunk, _enc, done) {
    logLines.push(chunk.toString());
    done();
  },
});

const responses: string[] = [];
const chains = parseChainsConfig(process.env.KEEL_CHAINS!);

async function call(client: TestOrg['core'], method: string, path: string, body?: unknown) {
  const res = await client.request(method, path, { body });
  responses.push(JSON.stringify(res.body));
  return res;
}

// Twenty racing derivations queue on one wallet's row lock through a 5-connection pool: on a loaded
// machine the default 800 ms wait for a connection answers 503, which is not what this file tests.
const { t, orgs: [org, other] } = useTestKeel({ LOG_LEVEL: 'trace', RATE_LIMIT_SCALE: 100, DB_ACQUIRE_TIMEOUT_MS: 10_000 }, { orgs: 2, logger: createLogger('trace', logSink) });

async function blockchainIdOf(chainId: number): Promise<string> {
  const res = await call(org.core, 'GET', '/v1/blockchains');
  return res.body.data.find((b: { chainId: number }) => b.chainId === chainId).id;
}

async function createWallet(body: Record<string, unknown> = {}, client = org.core) {
  const blockchainId = await blockchainIdOf(chains[0].chainId);
  return call(client, 'POST', '/v1/master-wallets', { blockchainId, name: 'Treasury', ...body });
}

describe('chain and asset registry', () => {
  it('lists both dev chains with their ids and confirmation counts', async () => {
    const res = await call(org.core, 'GET', '/v1/blockchains');
    expect(res.status).toBe(200);
    expect(res.body.data.map((b: { chainId: number }) => b.chainId)).toEqual(chains.map((c) => c.chainId));
    expect(res.body.data[0]).toMatchObject({ symbol: 'ETH', isActive: true, isEvmCompatible: true, tokenStandard: 'ERC20', configurations: { confirmations: 2 } });
    expect(res.body.data[0]).not.toHaveProperty('rpcUrl');
    const one = await call(org.core, 'GET', `/v1/blockchains/${res.body.data[1].id}`);
    expect(one.body.data).toMatchObject({ id: res.body.data[1].id, chainId: chains[1].chainId });
    expect((await call(org.core, 'GET', '/v1/blockchains/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });

  it('registers the native coin, the three test tokens and the two test NFT collections on each chain', async () => {
    const res = await call(org.core, 'GET', '/v1/assets?limit=100');
    expect(res.body.total).toBe(12);
    const onFirst = res.body.data.filter((a: { blockchain: { chainId: number } }) => a.blockchain.chainId === chains[0].chainId);
    expect(onFirst.map((a: { symbol: string; decimals: number; isNative: boolean; standard: string }) => [a.symbol, a.decimals, a.isNative, a.standard])).toEqual([
      ['ETH', 18, true, 'native'],
      ['DAI', 18, false, 'ERC20'],
      ['KITEM', 0, false, 'ERC1155'],
      ['KNFT', 0, false, 'ERC721'],
      ['USDC', 6, false, 'ERC20'],
      ['USDT', 6, false, 'ERC20'],
    ]);
    const usdc = await call(org.core, 'GET', `/v1/assets?symbol=usdc&blockchainId=${onFirst[0].blockchainId}`);
    expect(usdc.body.data).toHaveLength(1);
    expect(usdc.body.data[0].address).toBe(chains[0].tokens.find((tk) => tk.symbol === 'USDC')!.address);
    expect((await call(org.core, 'GET', `/v1/assets/${usdc.body.data[0].id}`)).body.data.symbol).toBe('USDC');
    expect((await call(org.core, 'GET', '/v1/assets?blockchainId=nope')).status).toBe(422);
  });
});

describe('master wallets', () => {
  it('creates an HD wallet on one chain, with default configurations and the spec fields', async () => {
    const res = await createWallet({ description: 'ops', metadata: { team: 'ops' } });
    expect(res.status).toBe(201);
    const w = res.body.data;
    expect(ethers.getAddress(w.walletAddress)).toBe(w.walletAddress);
    expect(w).toMatchObject({
      name: 'Treasury',
      description: 'ops',
      network: 'devnet',
      metadata: { team: 'ops' },
      isActive: true,
      analytics: { addressesCount: 0, autoSettlementRulesCount: 0, paymentLinksCount: 0 },
      configurations: {
        enableMultiChain: false,
        enableGaslessWithdraw: false,
        autoSweep: { enabled: false, threshold: '0', destinationAddress: '' },
        security: { requireApprovalForTransfers: false, maxTransferAmount: '', allowedRecipients: [], allowSpendingApprovals: false },
      },
    });
    expect(w.blockchain.chainId).toBe(chains[0].chainId);
    expect(w.enabledBlockchains.map((b: { chainId: number }) => b.chainId)).toEqual([chains[0].chainId]);
  });

  it('with enableMultiChain serves every EVM chain from one address', async () => {
    const res = await createWallet({ configurations: { enableMultiChain: true } });
    expect(res.body.data.enabledBlockchains.map((b: { chainId: number }) => b.chainId).sort()).toEqual(chains.map((c) => c.chainId).sort());
    const single = await createWallet();
    const turnedOn = await call(org.core, 'PATCH', `/v1/master-wallets/${single.body.data.id}`, { configurations: { enableMultiChain: true } });
    expect(turnedOn.body.data.enabledBlockchains).toHaveLength(2);
    expect(turnedOn.body.data.walletAddress).toBe(single.body.data.walletAddress);
  });

  it('refuses bad configurations naming the field, and an unknown chain', async () => {
    const bad = await createWallet({ configurations: { security: { allowedRecipients: ['0x123'] } } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.fields[0].field).toBe('configurations.security.allowedRecipients.0');
    const unknownKey = await createWallet({ configurations: { autoSweep: { everything: true } } });
    expect(unknownKey.status).toBe(422);
    const chain = await call(org.core, 'POST', '/v1/master-wallets', { blockchainId: '00000000-0000-4000-8000-000000000000', name: 'x' });
    expect(chain.status).toBe(422);
    expect(chain.body.error.details.fields[0].field).toBe('blockchainId');
  });

  it('lists, gets and updates, merging configurations one level deep, and emits master events', async () => {
    const created = (await createWallet({ name: 'Ops' })).body.data;
    const recipient = ethers.Wallet.createRandom().address;
    const updated = await call(org.core, 'PATCH', `/v1/master-wallets/${created.id}`, {
      name: 'Ops 2',
      configurations: { security: { maxTransferAmount: '1000', allowedRecipients: [recipient.toLowerCase()] } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.data.name).toBe('Ops 2');
    expect(updated.body.data.configurations.security).toEqual({ requireApprovalForTransfers: false, maxTransferAmount: '1000', allowedRecipients: [recipient], allowSpendingApprovals: false });
    const list = await call(org.core, 'GET', '/v1/master-wallets?limit=2');
    expect(list.body.data).toHaveLength(2);
    expect(list.body.hasMore).toBe(true);
    expect((await call(org.core, 'GET', `/v1/master-wallets/${created.id}`)).body.data.name).toBe('Ops 2');
    const events = await t.keel.platform.db('outbox_events').where({ organization_id: org.orgId }).whereRaw("envelope->'data'->>'id' = ?", [created.id]).orderBy('sequence').pluck('type');
    expect(events).toEqual(['master.created', 'master.updated']);
  });

  it("hides another organisation's wallet as 404 WALLET_NOT_FOUND", async () => {
    const mine = (await createWallet()).body.data;
    for (const [method, path] of [
      ['GET', `/v1/master-wallets/${mine.id}`],
      ['PATCH', `/v1/master-wallets/${mine.id}`],
      ['GET', `/v1/master-wallets/${mine.id}/addresses`],
      ['POST', `/v1/master-wallets/${mine.id}/addresses`],
      ['GET', `/v1/master-wallets/${mine.id}/balances`],
      ['GET', '/v1/master-wallets/not-a-uuid'],
    ]) {
      const res = await call(other.core, method, path, method === 'PATCH' ? { name: 'x' } : undefined);
      expect({ path, status: res.status, code: res.body.error?.code }).toEqual({ path, status: 404, code: 'WALLET_NOT_FOUND' });
    }
    expect((await call(other.core, 'GET', '/v1/master-wallets')).body.data.map((w: { id: string }) => w.id)).not.toContain(mine.id);
  });

  it('turns monitoring off and on per chain, and refuses a chain the wallet is not on', async () => {
    const w = (await createWallet()).body.data;
    const [first, second] = await Promise.all(chains.map((c) => blockchainIdOf(c.chainId)));
    const off = await call(org.core, 'POST', `/v1/master-wallets/${w.id}/monitoring/${first}/disable`);
    expect(off.status).toBe(200);
    expect(off.body.message).toMatch(/disabled/);
    expect(off.body.data.monitoring).toEqual([{ blockchainId: first, enabled: false }]);
    const on = await call(org.core, 'POST', `/v1/master-wallets/${w.id}/monitoring/${first}/enable`);
    expect(on.body.data.monitoring).toEqual([{ blockchainId: first, enabled: true }]);
    const elsewhere = await call(org.core, 'POST', `/v1/master-wallets/${w.id}/monitoring/${second}/enable`);
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.error.code).toBe('MONITORING_FAILED');
  });

  it('reads balances from the chain', async () => {
    const w = (await createWallet()).body.data;
    const usdc = chains[0].tokens.find((tk) => tk.symbol === 'USDC')!;
    await fundFromFaucet(chains[0].rpcUrl, devChainAccount(0).privateKey, { to: w.walletAddress, amount: '1.5' });
    await fundFromFaucet(chains[0].rpcUrl, devChainAccount(0).privateKey, { to: w.walletAddress, token: usdc, amount: '250.25' });
    const res = await call(org.core, 'GET', `/v1/master-wallets/${w.id}/balances`);
    const bySymbol = Object.fromEntries(res.body.data.map((b: { asset: { symbol: string }; balance: string }) => [b.asset.symbol, b.balance]));
    expect(bySymbol).toEqual({ ETH: '1.5', DAI: '0', USDC: '250.25', USDT: '0' });
  });
});

describe('deposit addresses', () => {
  it('derives the next index for each request, never reusing one, even when requests race', async () => {
    const w = (await createWallet()).body.data;
    const created = await Promise.all(Array.from({ length: 20 }, (_, i) => call(org.core, 'POST', `/v1/master-wallets/${w.id}/addresses`, { name: `customer ${i}` })));
    expect(created.map((r) => r.status)).toEqual(Array(20).fill(201));
    const indexes = created.map((r) => r.body.data.derivationIndex).sort((a, b) => a - b);
    expect(indexes).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(new Set(created.map((r) => r.body.data.address)).size).toBe(20);
    // Each address is the HD child at its index: the key Keel holds signs for it.
    const row = await MasterWalletModel.query(t.keel.platform.db).findById(w.id);
    for (const r of created.slice(0, 3)) {
      expect((await t.keel.services.walletKeys.signer(w.id, row!.sealedMnemonic, r.body.data.derivationIndex)).address).toBe(r.body.data.address);
    }
    expect((await call(org.core, 'GET', `/v1/master-wallets/${w.id}`)).body.data.analytics.addressesCount).toBe(20);
    const page = await call(org.core, 'GET', `/v1/master-wallets/${w.id}/addresses?limit=5`);
    expect(page.body).toMatchObject({ total: 20, hasMore: true });
    expect(page.body.data[0].derivationIndex).toBe(20);
  });

  it('gets, updates and deactivates an address, emitting address events; other organisations get 404', async () => {
    const w = (await createWallet()).body.data;
    const a = (await call(org.core, 'POST', `/v1/master-wallets/${w.id}/addresses`, { name: 'alice', metadata: { customer: 7 } })).body.data;
    expect(a).toMatchObject({ name: 'alice', metadata: { customer: 7 }, masterWalletId: w.id, isActive: true });
    expect((await call(org.core, 'PATCH', `/v1/addresses/${a.id}`, { name: 'alice b' })).body.data.name).toBe('alice b');
    expect((await call(org.core, 'POST', `/v1/addresses/${a.id}/deactivate`)).body.data.isActive).toBe(false);
    expect((await call(org.core, 'GET', `/v1/addresses/${a.id}`)).body.data).toMatchObject({ name: 'alice b', isActive: false });
    for (const [method, path] of [
      ['GET', `/v1/addresses/${a.id}`],
      ['PATCH', `/v1/addresses/${a.id}`],
      ['POST', `/v1/addresses/${a.id}/deactivate`],
      ['GET', `/v1/addresses/${a.id}/recoverable-assets?blockchainId=${w.blockchainId}`],
    ]) {
      expect((await call(other.core, method, path, method === 'PATCH' ? { name: 'x' } : undefined)).status).toBe(404);
    }
    const events = await t.keel.platform.db('outbox_events').whereRaw("envelope->'data'->>'id' = ?", [a.id]).orderBy('sequence').pluck('type');
    expect(events).toEqual(['address.created', 'address.updated', 'address.updated']);
  });

  it('reports recoverable native and token balances read from the chain', async () => {
    const w = (await createWallet()).body.data;
    const a = (await call(org.core, 'POST', `/v1/master-wallets/${w.id}/addresses`)).body.data;
    const dai = chains[0].tokens.find((tk) => tk.symbol === 'DAI')!;
    await fundFromFaucet(chains[0].rpcUrl, devChainAccount(0).privateKey, { to: a.address, amount: '0.25' });
    await fundFromFaucet(chains[0].rpcUrl, devChainAccount(0).privateKey, { to: a.address, token: dai, amount: '42' });
    const all = await call(org.core, 'GET', `/v1/addresses/${a.id}/recoverable-assets?blockchainId=${w.blockchainId}`);
    expect(all.status).toBe(200);
    expect(all.body.data.native).toBe('0.25');
    expect(all.body.data.tokens.find((tk: { symbol: string }) => tk.symbol === 'DAI')).toEqual({ address: dai.address, symbol: 'DAI', name: dai.name, decimals: 18, balance: '42', logoUrl: '' });
    const one = await call(org.core, 'GET', `/v1/addresses/${a.id}/recoverable-assets?blockchainId=${w.blockchainId}&tokenAddresses=${dai.address.toLowerCase()}`);
    expect(one.body.data.tokens).toHaveLength(1);

    const badChecksum = dai.address.slice(0, 2) + dai.address.slice(2, 6).toLowerCase() + dai.address.slice(6).toUpperCase();
    const bad = await call(org.core, 'GET', `/v1/addresses/${a.id}/recoverable-assets?blockchainId=${w.blockchainId}&tokenAddresses=${badChecksum}`);
    if (badChecksum !== dai.address) expect(bad.body.error?.code).toBe('INVALID_ADDRESS');
    const notToken = await call(org.core, 'GET', `/v1/addresses/${a.id}/recoverable-assets?blockchainId=${w.blockchainId}&tokenAddresses=${w.walletAddress}`);
    expect(notToken.body.error.code).toBe('INVALID_ADDRESS');
    const missing = await call(org.core, 'GET', `/v1/addresses/${a.id}/recoverable-assets`);
    expect(missing.status).toBe(422);
    const privateRpc = await call(org.core, 'GET', `/v1/addresses/${a.id}/recoverable-assets?blockchainId=${w.blockchainId}&rpcUrl=${encodeURIComponent(chains[0].rpcUrl)}`);
    expect(privateRpc.status).toBe(422);
    expect(privateRpc.body.error.details.fields[0].field).toBe('rpcUrl');
  });

  it('reads through a custom RPC URL when private ones are allowed, and refuses one serving another chain', async () => {
    const local = await startTestKeel({ RECOVERY_RPC_ALLOW_PRIVATE_URLS: true });
    try {
      const o = await local.createOrg();
      const blockchains = (await o.core.get('/v1/blockchains')).body.data;
      const w = (await o.core.post('/v1/master-wallets', { blockchainId: blockchains[0].id, name: 'r' })).body.data;
      const a = (await o.core.post(`/v1/master-wallets/${w.id}/addresses`)).body.data;
      const ok = await o.core.get(`/v1/addresses/${a.id}/recoverable-assets?blockchainId=${blockchains[0].id}&rpcUrl=${encodeURIComponent(chains[0].rpcUrl)}`);
      expect(ok.status).toBe(200);
      expect(ok.body.data.native).toBe('0');
      const wrong = await o.core.get(`/v1/addresses/${a.id}/recoverable-assets?blockchainId=${blockchains[0].id}&rpcUrl=${encodeURIComponent(chains[1].rpcUrl)}`);
      expect(wrong.body.error.code).toBe('INVALID_NETWORK');
    } finally {
      await local.stop();
    }
  });
});

describe('wallet secrets', () => {
  it('are sealed at rest and never appear in a response or a log line', async () => {
    const rows = await MasterWalletModel.query(t.keel.platform.db).whereIn('organizationId', [org.orgId, other.orgId]);
    expect(rows.length).toBeGreaterThan(5);
    const haystack = [...responses, ...logLines].join('\n').toLowerCase();
    expect(logLines.length).toBeGreaterThan(50);
    for (const row of rows) {
      const signer = await t.keel.services.walletKeys.signer(row.id, row.sealedMnemonic, 0);
      const phrase = t.keel.platform.secretBox.open(row.sealedMnemonic, row.id);
      expect(row.sealedMnemonic).not.toContain(phrase.split(' ')[0] + ' ');
      expect(haystack).not.toContain(phrase);
      expect(haystack).not.toContain(signer.privateKey.slice(2).toLowerCase());
      expect(haystack).not.toContain(row.sealedMnemonic.toLowerCase());
      expect(haystack).not.toContain(row.accountXpub!.toLowerCase());
    }
  });
});

/**
 * A master wallet deactivated, or its monitoring turned off, while a Keel line is on its way to it:
 * the line's sender was debited when it was requested, so what the line brings is recorded and
 * credited when it confirms, and the wallet can spend it once active again.
 */
describe('a wallet turned off while a Keel line to it is on its way', () => {
  const CONFIRMATIONS = 2;
  let k: OwnChainKeel;

  beforeAll(async () => {
    k = await startKeelOnOwnChain(31_354, CONFIRMATIONS, { TRANSFER_POLL_INTERVAL_MS: 100 });
  }, 60_000);
  afterAll(() => k?.stop());

  const custody = async (walletId: string) => (await k.t.keel.services.ledger.balance(k.t.keel.platform.db, walletId, k.assets.USDC.id, 'custody')).available;
  const usdc = (amount: string) => ethers.parseUnits(amount, 6);

  async function fund(address: string, asset: 'ETH' | 'USDC', amount: string) {
    const { txHash } = (await k.org.core.request('POST', '/v1/dev/faucet', { body: { blockchainId: k.blockchainId, address, asset, amount } })).body.data;
    await mine(k.chain.rpcUrl, CONFIRMATIONS - 1);
    await eventually(async () => (await k.t.keel.platform.db('ledger_entries').where('reference', 'like', `deposit:${k.blockchainId}:${txHash}:%`).first()) !== undefined);
  }

  const turnOff = {
    deactivated: {
      off: (id: string) => k.org.core.request('PATCH', `/v1/master-wallets/${id}`, { body: { isActive: false } }),
      on: (id: string) => k.org.core.request('PATCH', `/v1/master-wallets/${id}`, { body: { isActive: true } }),
    },
    'monitoring off': {
      off: (id: string) => k.org.core.request('POST', `/v1/master-wallets/${id}/monitoring/${k.blockchainId}/disable`),
      on: (id: string) => k.org.core.request('POST', `/v1/master-wallets/${id}/monitoring/${k.blockchainId}/enable`),
    },
  };

  it.each(Object.keys(turnOff) as (keyof typeof turnOff)[])("%s: an address's 40 USDC sent to its master wallet are credited to the wallet when the line confirms, and the wallet spends them once on again", async (how) => {
    const w = (await k.org.core.request('POST', '/v1/master-wallets', { body: { blockchainId: k.blockchainId, name: 'Treasury' } })).body.data;
    const a = (await k.org.core.request('POST', `/v1/master-wallets/${w.id}/addresses`, { body: {} })).body.data;
    await fund(w.walletAddress, 'ETH', '1');
    await fund(a.address, 'ETH', '1');
    await fund(a.address, 'USDC', '100');

    const sent = await k.org.core.request('POST', `/v1/addresses/${a.id}/transfer`, { body: { assets: [{ assetId: k.assets.USDC.id, recipient: w.walletAddress, amount: '40' }] } });
    expect(sent.status).toBe(201);
    // Mined (the chain mines each transaction as it arrives), not yet final.
    const line = await eventually(async () => {
      const item = (await k.org.core.request('GET', `/v1/transfers/${sent.body.data.id}`)).body.data.items[0];
      return item.status === 'SUBMITTED' && item;
    });
    expect((await turnOff[how].off(w.id)).status).toBe(200);

    await mine(k.chain.rpcUrl, CONFIRMATIONS);
    const done = await eventually(async () => {
      const item = (await k.org.core.request('GET', `/v1/transfers/${sent.body.data.id}`)).body.data.items[0];
      return item.status === 'CONFIRMED' && item;
    }, 30_000, 200);
    expect(done.txHash).toBe(line.txHash);
    const block = Number(done.blockNumber);
    // A line final before the watcher scanned its block keeps the wallet watched for that scan; not once the block is behind it.
    const { watchedWallets } = k.t.keel.services;
    expect((await watchedWallets.on(k.blockchainId, { after: block - 1, through: block })).has(w.walletAddress.toLowerCase())).toBe(true);
    expect((await watchedWallets.on(k.blockchainId)).has(w.walletAddress.toLowerCase())).toBe(false);
    await eventually(async () => Number((await k.t.keel.platform.db('chain_cursors').where({ blockchainId: k.blockchainId }).first()).blockNumber) >= block);
    await eventually(async () => (await custody(w.id)) === usdc('40'));
    expect(await custody(a.id)).toBe(usdc('60'));

    expect((await turnOff[how].on(w.id)).status).toBe(200);
    const withdrawal = await k.org.core.request('POST', `/v1/master-wallets/${w.id}/transfer`, { body: { assets: [{ assetId: k.assets.USDC.id, recipient: ethers.Wallet.createRandom().address, amount: '10' }] } });
    expect(withdrawal.status).toBe(201);
    expect(await custody(w.id)).toBe(usdc('30'));
  });
});
