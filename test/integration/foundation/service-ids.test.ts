import { useTestKeel } from '../../support/use-test-keel';
import type { Services } from '../../../src/services';

/**
 * The service owns id → 404: whoever calls it (a resolver, the REST shim, the CLI, another service),
 * an id that is not a UUID names nothing and is answered as an unknown one, and a malformed id
 * filter is a 422 naming the field. No caller has to check ids first.
 */
let services: Services;

const { t, orgs: [org] } = useTestKeel({}, { orgs: 1 });
beforeAll(async () => {
  services = t.keel.services;
});

const MALFORMED = 'not-a-uuid';

test.each<[string, () => Promise<unknown>, string, string]>([
  ['webhook subscription', () => services.webhooks.get(org.orgId, MALFORMED), 'NOT_FOUND', 'Webhook subscription not found'],
  ['webhook event', () => services.webhooks.getDelivery(org.orgId, MALFORMED), 'NOT_FOUND', 'Webhook event not found'],
  ['api key', () => services.apiKeys.get(org.orgId, MALFORMED), 'NOT_FOUND', 'Resource not found'],
  ['blockchain', () => services.chains.getBlockchain(MALFORMED), 'NOT_FOUND', 'Blockchain not found'],
  ['asset', () => services.chains.getAsset(MALFORMED), 'NOT_FOUND', 'Asset not found'],
  ['master wallet', () => services.masterWallets.get(org.orgId, MALFORMED), 'WALLET_NOT_FOUND', 'Master wallet not found'],
  ['address', () => services.addresses.get(org.orgId, MALFORMED), 'NOT_FOUND', 'Address not found'],
  ['transfer', () => services.transfers.queries.get(org.orgId, MALFORMED), 'NOT_FOUND', 'Transfer not found'],
  ['chain transfer history', () => services.chainTransferHistory.list(org.orgId, { addressId: MALFORMED }, { sort: 'DESC', limit: 10 }), 'NOT_FOUND', 'Address not found'],
])('a malformed %s id is not found, from the service itself', async (_what, call, code, message) => {
  await expect(call()).rejects.toMatchObject({ code, message });
});

test('a malformed id filter is a 422 naming the field, from the service itself', async () => {
  await expect(services.chains.listAssets({ limit: 10, offset: 0, blockchainId: MALFORMED })).rejects.toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'blockchainId' }] } });
  await expect(services.webhooks.listDeliveries(org.orgId, { limit: 10, offset: 0, subscriptionId: MALFORMED })).rejects.toMatchObject({ code: 'INVALID_FIELD' });
});

test('an id in upper case names the same thing', async () => {
  const [chain] = (await services.chains.listBlockchains({ limit: 1, offset: 0 })).items;
  expect((await services.chains.getBlockchain(chain.id.toUpperCase())).id).toBe(chain.id);
});
