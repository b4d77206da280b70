import { ethers } from 'ethers';
import { ApiClient } from '../../support/api-client';
import { eventually } from '../../support/eventually';
import { useTestKeel } from '../../support/use-test-keel';

/**
 * Where a wallet's money may go: security and autoSweep change only with the admin scope; a sweep
 * goes to the wallet itself or one of its allowed recipients (when set and when it runs); the
 * transfer cap limits a request's total per asset.
 */
let writer: ApiClient;
let chainId: string;
let usdc: string;
const recipient = () => ethers.Wallet.createRandom().address;

const { t, orgs: [org] } = useTestKeel({ RATE_LIMIT_SCALE: 100, CHAIN_POLL_INTERVAL_MS: 100 }, { orgs: 1 });
beforeAll(async () => {
  const secret = (await org.core.post('/v1/api-keys', { name: 'writer', scopes: ['read', 'write'] })).body.data.secret;
  writer = org.core.with({ apiKey: secret, orgId: org.orgId });
  chainId = (await org.core.get('/v1/blockchains')).body.data[0].id;
  usdc = (await org.core.get(`/v1/assets?blockchainId=${chainId}&symbol=USDC`)).body.data[0].id;
});

async function adminWallet(configurations?: object): Promise<{ id: string; walletAddress: string }> {
  const res = await org.core.post('/v1/master-wallets', { blockchainId: chainId, name: 'Treasury', configurations });
  expect(res.status).toBe(201);
  return res.body.data;
}

describe('security and autoSweep settings need the admin scope', () => {
  const guarded = [{ security: { maxTransferAmount: '' } }, { security: { allowedRecipients: [] } }, { autoSweep: { enabled: false } }];

  it.each(guarded)('a write key setting %j is 403 naming admin, on create and update, REST and GraphQL', async (configurations) => {
    const wallet = await adminWallet();
    const responses = [
      await writer.post('/v1/master-wallets', { blockchainId: chainId, name: 'Mine', configurations }),
      await writer.patch(`/v1/master-wallets/${wallet.id}`, { configurations }),
    ];
    for (const res of responses) {
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain("'admin'");
    }
    const gql = await writer.graphql('mutation($id: ID!, $input: UpdateMasterWalletInput!) { updateMasterWallet(id: $id, input: $input) { id } }', { id: wallet.id, input: { configurations } });
    expect(gql.body.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(gql.body.errors[0].message).toContain("'admin'");
    const create = await writer.graphql('mutation($input: CreateMasterWalletInput!) { createMasterWallet(input: $input) { id } }', { input: { blockchainId: chainId, name: 'Mine', configurations } });
    expect(create.body.errors[0].message).toContain("'admin'");
  });

  it('a write key touching security with an otherwise invalid body is still 403 naming admin, not 422 (REST, GraphQL with variables and with literals)', async () => {
    const wallet = await adminWallet();
    const invalid = { name: 42, configurations: { security: { maxTransferAmount: 'not a number' } } };
    for (const res of [await writer.post('/v1/master-wallets', { ...invalid, blockchainId: 'not-a-uuid' }), await writer.patch(`/v1/master-wallets/${wallet.id}`, invalid)]) {
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain("'admin'");
    }
    const withVariables = await writer.graphql('mutation($id: ID!, $input: UpdateMasterWalletInput!) { updateMasterWallet(id: $id, input: $input) { id } }', { id: wallet.id, input: invalid });
    expect(withVariables.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const literal = await writer.graphql(`mutation { updateMasterWallet(id: "${wallet.id}", input: { name: 42, configurations: { security: { maxTransferAmount: "x" } } }) { id } }`);
    expect(literal.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it('other fields stay write: name, metadata and the other configurations', async () => {
    const created = await writer.post('/v1/master-wallets', { blockchainId: chainId, name: 'Ops', configurations: { monitoring: { alertOnLargeTransfers: '100' } } });
    expect(created.status).toBe(201);
    const updated = await writer.patch(`/v1/master-wallets/${created.body.data.id}`, { name: 'Ops 2', configurations: { enableGaslessWithdraw: true } });
    expect(updated.status).toBe(200);
  });

  it('an admin key sets them', async () => {
    const wallet = await adminWallet({ security: { maxTransferAmount: '5', requireApprovalForTransfers: true } });
    const res = await org.core.patch(`/v1/master-wallets/${wallet.id}`, { configurations: { security: { maxTransferAmount: '50' } } });
    expect(res.body.data.configurations.security).toMatchObject({ maxTransferAmount: '50', requireApprovalForTransfers: true });
  });
});

describe('a sweep goes to the wallet itself or one of its allowed recipients', () => {
  it('a destination outside the policy is refused when set (422 naming it); inside it, or the wallet itself, is accepted', async () => {
    const outside = recipient();
    const refused = await org.core.post('/v1/master-wallets', { blockchainId: chainId, name: 'Sweeping', configurations: { autoSweep: { enabled: true, threshold: '1', destinationAddress: outside } } });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'configurations.autoSweep.destinationAddress' }] } });

    const wallet = await adminWallet({ autoSweep: { enabled: true, threshold: '1', destinationAddress: outside }, security: { allowedRecipients: [outside] } });
    // Taking the destination off the allowed list while sweeps still go there is refused too.
    const narrowed = await org.core.patch(`/v1/master-wallets/${wallet.id}`, { configurations: { security: { allowedRecipients: [recipient()] } } });
    expect(narrowed.status).toBe(422);
    const self = await org.core.patch(`/v1/master-wallets/${wallet.id}`, { configurations: { autoSweep: { destinationAddress: wallet.walletAddress }, security: { allowedRecipients: [] } } });
    expect(self.status).toBe(200);
    const gql = await org.core.graphql('mutation($id: ID!, $input: UpdateMasterWalletInput!) { updateMasterWallet(id: $id, input: $input) { id } }', { id: wallet.id, input: { configurations: { autoSweep: { destinationAddress: outside } } } });
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'configurations.autoSweep.destinationAddress' }] } });
  });

  it('a sweep is checked again when it runs: a stored destination outside the policy is never swept to', async () => {
    const outside = recipient();
    const wallet = await adminWallet({ autoSweep: { enabled: true, threshold: '1' } });
    // Configurations stored before the rule (or written around the API) can name any destination.
    const row = await t.keel.platform.db('master_wallets').where({ id: wallet.id }).first();
    await t.keel.platform.db('master_wallets').where({ id: wallet.id }).update({ configurations: { ...row.configurations, autoSweep: { enabled: true, threshold: '1', destinationAddress: outside } } });
    const address = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, {})).body.data;
    await org.core.post('/v1/dev/faucet', { blockchainId: chainId, address: address.address, amount: '1.5' });
    // The sweep would be arranged in the same transaction that records the deposit.
    await eventually(async () => (await org.core.get(`/v1/addresses/${address.id}/transactions`)).body.totalCount === 1, 30_000);
    expect((await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.total).toBe(0);
  }, 45_000);

  it("Keel's settlement contract is no sweep destination: setting it (any casing, on create or update, REST and GraphQL, or enableMultiChain adding its chain) is 422 VALIDATION_ERROR naming it, after the admin scope; one stored around the API is never swept to", async () => {
    const deployments = t.keel.services.settlementDeployments;
    await deployments.ensureOnDevChain(t.keel.services.networks.get(chainId)!);
    const contract = (await deployments.address(chainId))!;
    const sweepTo = (address: string) => ({ autoSweep: { enabled: true, threshold: '1', destinationAddress: address }, security: { allowedRecipients: [address] } });
    const refused = (res: { status: number; body: any }) => {
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'configurations.autoSweep.destinationAddress', error: 'INVALID_FIELD' }], settlementContract: contract } });
      expect(res.body.error.message).toMatch(/settlement contract.*trading\/deposits/);
    };
    const wallet = await adminWallet();
    expect((await writer.patch(`/v1/master-wallets/${wallet.id}`, { configurations: sweepTo(contract) })).status).toBe(403);
    refused(await org.core.post('/v1/master-wallets', { blockchainId: chainId, name: 'Sweeping', configurations: sweepTo(contract.toLowerCase()) }));
    refused(await org.core.patch(`/v1/master-wallets/${wallet.id}`, { configurations: sweepTo(contract) }));
    const gql = await org.core.graphql('mutation($id: ID!, $input: UpdateMasterWalletInput!) { updateMasterWallet(id: $id, input: $input) { id } }', { id: wallet.id, input: { configurations: sweepTo(contract.toLowerCase()) } });
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'configurations.autoSweep.destinationAddress', error: 'INVALID_FIELD' }] } });
    expect((await org.core.get(`/v1/master-wallets/${wallet.id}`)).body.data.configurations.autoSweep.destinationAddress).toBe('');

    // On a chain without the contract the address is an ordinary one, until enableMultiChain would sweep there too.
    const otherChain = (await org.core.get('/v1/blockchains')).body.data[1].id;
    const elsewhere = await org.core.post('/v1/master-wallets', { blockchainId: otherChain, name: 'Elsewhere', configurations: sweepTo(contract) });
    expect(elsewhere.status).toBe(201);
    refused(await org.core.patch(`/v1/master-wallets/${elsewhere.body.data.id}`, { configurations: { enableMultiChain: true } }));

    // A configuration that already held it (saved before the contract was deployed, or written around the API): a token
    // deposit the wallet could pay the sweep's gas for is not swept to it, nor due again.
    const row = await t.keel.platform.db('master_wallets').where({ id: wallet.id }).first();
    await t.keel.platform.db('master_wallets').where({ id: wallet.id }).update({ configurations: { ...row.configurations, ...sweepTo(contract), enableGaslessWithdraw: true } });
    await org.core.post('/v1/dev/faucet', { blockchainId: chainId, address: wallet.walletAddress, amount: '1' });
    const address = (await org.core.post(`/v1/master-wallets/${wallet.id}/addresses`, {})).body.data;
    await org.core.post('/v1/dev/faucet', { blockchainId: chainId, address: address.address, amount: '10', asset: 'USDC' });
    // The sweep would be arranged in the same transaction that records the deposit.
    await eventually(async () => (await org.core.get(`/v1/addresses/${address.id}/transactions`)).body.totalCount === 1, 30_000);
    expect((await org.core.get(`/v1/transfers?masterWalletId=${wallet.id}`)).body.total).toBe(0);
    expect(await t.keel.platform.db('sweeps_due').where({ addressId: address.id })).toEqual([]);
  }, 60_000);
});

describe('the transfer cap limits the total of one request per asset', () => {
  it('two lines under the cap that together exceed it are 403 naming the line that crosses it, REST and GraphQL', async () => {
    const wallet = await adminWallet({ security: { maxTransferAmount: '10' } });
    const lines = [
      { assetId: usdc, recipient: recipient(), amount: '6' },
      { assetId: usdc, recipient: recipient(), amount: '6' },
    ];
    const rest = await org.core.post(`/v1/master-wallets/${wallet.id}/transfer`, { assets: lines });
    expect(rest.status).toBe(403);
    expect(rest.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'assets.1.amount' }] } });
    const gql = await org.core.graphql('mutation($id: ID!, $input: TransferInput!) { transferFromMasterWallet(id: $id, input: $input) { id } }', { id: wallet.id, input: { assets: lines } });
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'assets.1.amount' }] } });
    // One line of the same amount passes the policy (and then meets the empty wallet).
    const one = await org.core.post(`/v1/master-wallets/${wallet.id}/transfer`, { assets: lines.slice(0, 1) });
    expect(one.body.error.code).toBe('INSUFFICIENT_FUNDS');
  });
});
