import { ethers } from 'ethers';
import { TestOrg } from '../../support/keel';
import { useTestKeel } from '../../support/use-test-keel';
import { ApiClient } from '../../support/api-client';

const FAST = { RATE_LIMIT_SCALE: 100, AUTH_CACHE_TTL_MS: 0 };

let chainId: string;

const { t, orgs: [org, other] } = useTestKeel(FAST, { orgs: 2 });
beforeAll(async () => {
  chainId = (await org.core.get('/v1/blockchains')).body.data[0].id;
});

async function createAgent(owner: TestOrg, name = 'Shopping bot') {
  const res = await owner.core.post('/v1/agents', { name, description: 'buys things', metadata: { team: 'ops' } });
  expect(res.status).toBe(201);
  const agent = res.body.data;
  return { agent, client: owner.core.with({ apiKey: agent.apiKey, orgId: owner.orgId }) };
}

async function keyWith(owner: TestOrg, scopes: string[]): Promise<ApiClient> {
  const res = await owner.core.post('/v1/api-keys', { name: scopes.join('+'), scopes });
  expect(res.status).toBe(201);
  return owner.core.with({ apiKey: res.body.data.secret, orgId: owner.orgId });
}

describe('agents', () => {
  test('creating an agent returns its key once; only the prefix is kept, and the key works for the agent', async () => {
    const { agent, client } = await createAgent(org);
    expect(agent).toMatchObject({ name: 'Shopping bot', description: 'buys things', status: 'ACTIVE', organizationId: org.orgId, metadata: { team: 'ops' } });
    expect(agent.apiKey).toMatch(/^kc_test_/);
    expect(agent.apiKeyPrefix).toBe(agent.apiKey.slice(0, 12));

    const read = await org.core.get(`/v1/agents/${agent.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data.apiKey).toBeNull();
    expect(read.body.data.apiKeyPrefix).toBe(agent.apiKeyPrefix);
    // Nothing but a hash of the key is stored.
    const stored = JSON.stringify(await t.keel.platform.db('api_keys').where({ agentId: agent.id }));
    expect(stored).not.toContain(agent.apiKey);
    const key = (await org.core.get('/v1/api-keys?limit=100')).body.data.find((k: { agentId: string | null }) => k.agentId === agent.id);
    expect(key).toMatchObject({ scopes: ['agent'], status: 'ACTIVE', prefix: agent.apiKeyPrefix });

    // The agent reads itself, and the list shows it alone.
    expect((await client.get(`/v1/agents/${agent.id}`)).body.data).toMatchObject({ id: agent.id, apiKey: null });
    const mine = await client.get('/v1/agents');
    expect(mine.body.data.map((a: { id: string }) => a.id)).toEqual([agent.id]);
  });

  test('list, update, with admin-only administration', async () => {
    const { agent } = await createAgent(org, 'Updater');
    const res = await org.core.patch(`/v1/agents/${agent.id}`, { name: 'Renamed', metadata: { v: 2 } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Renamed', metadata: { v: 2 }, description: 'buys things' });
    const list = await org.core.get('/v1/agents?status=ACTIVE&limit=100');
    expect(list.body.data.map((a: { id: string }) => a.id)).toContain(agent.id);

    const writer = await keyWith(org, ['read', 'write']);
    for (const [method, path, body] of [
      ['POST', '/v1/agents', { name: 'x' }],
      ['PATCH', `/v1/agents/${agent.id}`, { name: 'x' }],
      ['POST', `/v1/agents/${agent.id}/suspend`, undefined],
      ['DELETE', `/v1/agents/${agent.id}`, undefined],
      ['POST', `/v1/agents/${agent.id}/wallets/create`, { blockchainId: chainId }],
      ['PUT', `/v1/agents/${agent.id}/policy`, { allowAnyRecipient: true }],
    ] as const) {
      const r = await writer.request(method, path, { body });
      expect([method, path, r.status, r.body.error.code]).toEqual([method, path, 403, 'FORBIDDEN']);
      expect(r.body.error.message).toContain("'admin'");
    }
    // A read key reads agents; a key without read does not, and is told which scope it lacks.
    const reader = await keyWith(org, ['read']);
    expect((await reader.get(`/v1/agents/${agent.id}`)).status).toBe(200);
    const writeOnly = await keyWith(org, ['write']);
    const refused = await writeOnly.get(`/v1/agents/${agent.id}/payments`);
    expect([refused.status, refused.body.error.message]).toEqual([403, "This API key lacks the scope 'read'"]);
  });

  test("an agent's key reaches its own agent, wallets, policy and payments, and nothing else", async () => {
    const { agent, client } = await createAgent(org, 'Narrow');
    const { agent: sibling } = await createAgent(org, 'Sibling');
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: chainId, name: 'Treasury' })).body.data;

    // Its own things: readable.
    for (const path of [`/v1/agents/${agent.id}`, `/v1/agents/${agent.id}/wallets`, `/v1/agents/${agent.id}/policy`, `/v1/agents/${agent.id}/payments`, `/v1/agents/${agent.id}/policy/changes`]) {
      expect([path, (await client.get(path)).status]).toEqual([path, 200]);
    }
    // Another agent of the same organisation: not found, exactly as a foreign one.
    for (const path of [`/v1/agents/${sibling.id}`, `/v1/agents/${sibling.id}/wallets`, `/v1/agents/${sibling.id}/payments`, `/v1/agents/${sibling.id}/policy`]) {
      const r = await client.get(path);
      expect([path, r.status, r.body.error.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
    // Everything else the organisation has: forbidden.
    const elsewhere: [string, string, unknown?][] = [
      ['GET', '/v1/organization'],
      ['GET', '/v1/api-keys'],
      ['POST', '/v1/api-keys', { name: 'escalate', scopes: ['admin'] }],
      ['GET', '/v1/master-wallets'],
      ['GET', `/v1/master-wallets/${wallet.id}`],
      ['POST', '/v1/master-wallets', { blockchainId: chainId, name: 'mine' }],
      ['POST', `/v1/master-wallets/${wallet.id}/transfer`, { assets: [{ assetId: chainId, recipient: ethers.ZeroAddress, amount: '1' }] }],
      ['GET', '/v1/transfers'],
      ['GET', '/v1/webhooks'],
      ['POST', '/v1/webhooks', { url: 'https://example.com/h', name: 'x', eventTypes: ['*'] }],
      ['GET', '/v1/blockchains'],
      ['POST', '/v1/agents', { name: 'child' }],
      ['POST', `/v1/agents/${agent.id}/suspend`],
      ['POST', `/v1/agents/${agent.id}/wallets/create`, { blockchainId: chainId }],
      ['PUT', `/v1/agents/${agent.id}/policy`, { allowAnyRecipient: true }],
      ['POST', `/v1/agents/${agent.id}/payments/${agent.id}/approve`],
      ['POST', '/v1/dev/faucet', { blockchainId: chainId, address: ethers.ZeroAddress, amount: '1' }],
    ];
    for (const [method, path, body] of elsewhere) {
      const r = await client.request(method, path, { body });
      expect([method, path, r.status, r.body.error?.code]).toEqual([method, path, 403, 'FORBIDDEN']);
    }
    const gql = await client.graphql('{ organization { id } }');
    expect(gql.body.errors[0].extensions.code).toBe('FORBIDDEN');
    // Not a key of the order-book host at all.
    expect((await new ApiClient(t.proUrl, client.credentials).get('/v1/orderbook/engine/status')).status).toBe(401);
    // And an organisation's keys cannot request payments in an agent's name.
    const asAdmin = await org.core.post(`/v1/agents/${agent.id}/payments`, { agentWalletId: agent.id, assetId: chainId, recipient: ethers.ZeroAddress, amount: '1' });
    expect(asAdmin.status).toBe(403);
    expect(asAdmin.body.error.message).toContain("'agent'");
  });

  test('no key created through the API can hold the agent scope', async () => {
    const res = await org.core.post('/v1/api-keys', { name: 'fake agent', scopes: ['agent'] });
    expect(res.status).toBe(422);
    expect(res.body.error.details.fields[0].field).toBe('scopes');
  });

  test('suspending revokes the key at once; resuming issues a new one; deleting removes the agent', async () => {
    const { agent, client } = await createAgent(org, 'Lifecycle');
    const suspended = await org.core.post(`/v1/agents/${agent.id}/suspend`);
    expect(suspended.body.data).toMatchObject({ status: 'SUSPENDED', apiKey: null });
    expect((await client.get(`/v1/agents/${agent.id}`)).status).toBe(401);

    const resumed = await org.core.post(`/v1/agents/${agent.id}/resume`);
    expect(resumed.body.data.status).toBe('ACTIVE');
    expect(resumed.body.data.apiKey).toMatch(/^kc_test_/);
    expect(resumed.body.data.apiKeyPrefix).toBe(resumed.body.data.apiKey.slice(0, 12));
    const renewed = org.core.with({ apiKey: resumed.body.data.apiKey, orgId: org.orgId });
    expect((await renewed.get(`/v1/agents/${agent.id}`)).status).toBe(200);
    expect((await client.get(`/v1/agents/${agent.id}`)).status).toBe(401);
    expect((await org.core.post(`/v1/agents/${agent.id}/resume`)).status).toBe(409);

    const deleted = await org.core.delete(`/v1/agents/${agent.id}`);
    expect(deleted.status).toBe(200);
    expect((await org.core.get(`/v1/agents/${agent.id}`)).status).toBe(404);
    expect((await renewed.get(`/v1/agents/${agent.id}`)).status).toBe(401);
    const events = (await t.keel.platform.db('outbox_events').whereRaw("envelope->'data'->>'agentId' = ?", [agent.id]).orderBy('sequence')).map((e) => e.type);
    expect(events).toEqual(['agent.created', 'agent.suspended', 'agent.resumed', 'agent.deleted']);
  });

  test("another organisation's agents are 404 on every route, malformed ids too", async () => {
    const { agent } = await createAgent(org, 'Private');
    const paths: [string, string, unknown?][] = [
      ['GET', `/v1/agents/${agent.id}`],
      ['PATCH', `/v1/agents/${agent.id}`, { name: 'mine now' }],
      ['POST', `/v1/agents/${agent.id}/suspend`],
      ['DELETE', `/v1/agents/${agent.id}`],
      ['POST', `/v1/agents/${agent.id}/wallets/create`, { blockchainId: chainId }],
      ['GET', `/v1/agents/${agent.id}/wallets`],
      ['GET', `/v1/agents/${agent.id}/policy`],
      ['PUT', `/v1/agents/${agent.id}/policy`, { allowAnyRecipient: true }],
      ['GET', `/v1/agents/${agent.id}/policy/changes`],
      ['GET', `/v1/agents/${agent.id}/payments`],
      ['GET', '/v1/agents/not-a-uuid'],
    ];
    for (const [method, path, body] of paths) {
      const r = await other.core.request(method, path, { body });
      expect([method, path, r.status, r.body.error.code]).toEqual([method, path, 404, 'NOT_FOUND']);
    }
    expect((await other.core.get('/v1/agents?limit=100')).body.data.map((a: { id: string }) => a.id)).not.toContain(agent.id);
    expect((await org.core.get(`/v1/agents/${agent.id}`)).body.data.name).toBe('Private');
  });

  test('an agent wallet is a new address under a master wallet on the chain, linked to the agent', async () => {
    const { agent, client } = await createAgent(org, 'Wallet owner');
    // An organisation without a master wallet on the chain is told to create one.
    const fresh = await t.createOrg();
    const { agent: lonely } = await createAgent(fresh, 'No wallets yet');
    const refused = await fresh.core.post(`/v1/agents/${lonely.id}/wallets/create`, { blockchainId: chainId });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details.fields[0].field).toBe('blockchainId');

    const master = (await org.core.post('/v1/master-wallets', { blockchainId: chainId, name: 'Agents' })).body.data;
    const res = await org.core.post(`/v1/agents/${agent.id}/wallets/create`, { blockchainId: chainId, masterWalletId: master.id, label: 'groceries' });
    expect(res.status).toBe(201);
    const w = res.body.data;
    expect(w).toMatchObject({ agentId: agent.id, organizationId: org.orgId, blockchainId: chainId, label: 'groceries', isActive: true });
    expect(w.addressWallet).toMatchObject({ id: w.addressId, masterWalletId: master.id, isActive: true, blockchain: { id: chainId } });
    expect(w.addressWallet.configurations).toMatchObject({ aml: expect.any(Object), security: expect.any(Object), settlement: expect.any(Object), notifications: expect.any(Object), disableAutoSweep: true });
    expect(ethers.isAddress(w.addressWallet.walletAddress)).toBe(true);
    // It is a deposit address of that master wallet, watched like any other.
    const address = await org.core.get(`/v1/addresses/${w.addressId}`);
    expect(address.body.data).toMatchObject({ address: w.addressWallet.walletAddress, masterWalletId: master.id });

    const mine = await client.get(`/v1/agents/${agent.id}/wallets`);
    expect(mine.body.data.map((x: { id: string }) => x.id)).toContain(w.id);
    expect((await client.get(`/v1/agents/${agent.id}/wallets/${w.id}`)).body.data.addressWallet.walletAddress).toBe(w.addressWallet.walletAddress);
    const unknownChain = await org.core.post(`/v1/agents/${agent.id}/wallets/create`, { blockchainId: '00000000-0000-4000-8000-000000000000' });
    expect(unknownChain.status).toBeGreaterThanOrEqual(400);
    expect(unknownChain.status).toBeLessThan(500);
  });

  test("an agent wallet's configurations.aml is its own address's screening, not its master wallet's", async () => {
    const { agent } = await createAgent(org, 'Screened');
    const master = (await org.core.post('/v1/master-wallets', { blockchainId: chainId, name: 'Screened agents' })).body.data;
    const create = async () => (await org.core.post(`/v1/agents/${agent.id}/wallets/create`, { blockchainId: chainId, masterWalletId: master.id })).body.data;
    const [tainted, clean] = [await create(), await create()];
    const eth = (await org.core.get(`/v1/assets?blockchainId=${chainId}&symbol=ETH`)).body.data[0];
    // A deposit the sanctions screen flagged (as the deposit watcher records it), not yet released.
    await t.keel.platform.db('chain_transfers').insert({
      organizationId: org.orgId, blockchainId: chainId, masterWalletId: master.id, addressId: tainted.addressId, assetId: eth.id, direction: 'incoming', category: 'external',
      txHash: ethers.hexlify(ethers.randomBytes(32)), logIndex: -1, blockNumber: 1, blockHash: ethers.ZeroHash, blockTimestamp: new Date(), fromAddress: ethers.Wallet.createRandom().address,
      toAddress: tainted.addressWallet.walletAddress, rawValue: '1', amlFlaggedAt: new Date(), amlMatches: JSON.stringify([{ list: 'TEST', address: '0x' }]),
    });
    const listed = (await org.core.get(`/v1/agents/${agent.id}/wallets`)).body.data;
    const amlOf = (id: string) => listed.find((w: { id: string }) => w.id === id).addressWallet.configurations.aml;
    expect(amlOf(tainted.id)).toMatchObject({ status: 'FLAGGED', message: expect.stringContaining('1 incoming transfer') });
    expect(amlOf(clean.id)).toMatchObject({ status: 'CLEAR' });
    expect((await org.core.get(`/v1/agents/${agent.id}/wallets/${clean.id}`)).body.data.addressWallet.configurations.aml.status).toBe('CLEAR');
  });

  test('policy changes are admin-only and audited: each a version, the key that made it, and the rules before and after', async () => {
    const { agent, client } = await createAgent(org, 'Audited');
    expect((await org.core.get(`/v1/agents/${agent.id}/policy`)).body.data).toBeNull();
    const first = await org.core.put(`/v1/agents/${agent.id}/policy`, { allowedBlockchainIds: [chainId], allowAnyRecipient: true, maxPerPaymentUsd: '100' });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ version: 1, allowedBlockchainIds: [chainId], allowedAssetIds: [], allowAnyRecipient: true, maxPerPaymentUsd: '100', windowSeconds: 86400 });
    const second = await org.core.put(`/v1/agents/${agent.id}/policy`, { allowedBlockchainIds: [chainId], deniedRecipients: [ethers.ZeroAddress], windowSeconds: 3600 });
    expect(second.body.data).toMatchObject({ id: first.body.data.id, version: 2, allowAnyRecipient: false, maxPerPaymentUsd: null, windowSeconds: 3600 });

    const adminKeyId = (await org.core.get('/v1/api-keys?limit=100')).body.data.find((k: { scopes: string[] }) => k.scopes.includes('admin')).id;
    const changes = await org.core.get(`/v1/agents/${agent.id}/policy/changes`);
    expect(changes.body.total).toBe(2);
    expect(changes.body.data[0]).toMatchObject({ version: 2, changedBy: adminKeyId, previousRules: { maxPerPaymentUsd: '100', allowAnyRecipient: true }, rules: { windowSeconds: 3600 } });
    expect(changes.body.data[1]).toMatchObject({ version: 1, previousRules: null });
    // The agent can see its policy and its history, and change neither.
    expect((await client.get(`/v1/agents/${agent.id}/policy`)).body.data.version).toBe(2);
    expect((await client.put(`/v1/agents/${agent.id}/policy`, { allowAnyRecipient: true })).status).toBe(403);
    const events = await t.keel.platform.db('outbox_events').where({ type: 'agent.policy_updated' }).whereRaw("envelope->'data'->>'agentId' = ?", [agent.id]);
    expect(events.map((e) => e.envelope.data.policy.version).sort()).toEqual([1, 2]);

    // Bad rules: 422 naming each field, nothing changed.
    const bad = await org.core.put(`/v1/agents/${agent.id}/policy`, { allowedAssetIds: ['nope'], allowedRecipients: ['0x123'], maxPerWindowUsd: '-1' });
    expect(bad.status).toBe(422);
    expect((await org.core.get(`/v1/agents/${agent.id}/policy`)).body.data.version).toBe(2);
  });
});
