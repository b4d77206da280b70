import { useTestKeel } from '../../support/use-test-keel';
import { ApiClient } from '../../support/api-client';

const { t, orgs: [org, other] } = useTestKeel({}, { orgs: 2 });

function expectUnauthorized(res: { status: number; body: any }) {
  expect(res.status).toBe(401);
  expect(res.body.error.code).toBe('UNAUTHORIZED');
  expect(typeof res.body.error.requestId).toBe('string');
}

describe('authentication (401 UNAUTHORIZED)', () => {
  test('a missing apiKey or orgId header', async () => {
    expectUnauthorized(await org.core.with({ orgId: org.orgId }).get('/v1/api-keys'));
    expectUnauthorized(await org.core.with({ apiKey: org.adminKey }).get('/v1/api-keys'));
  });

  test('an unknown key', async () => {
    expectUnauthorized(await org.core.with({ apiKey: `kc_test_${'A'.repeat(43)}`, orgId: org.orgId }).get('/v1/api-keys'));
    expectUnauthorized(await org.core.with({ apiKey: 'not-a-key', orgId: org.orgId }).get('/v1/api-keys'));
  });

  test("another organisation's id with a valid key", async () => {
    expectUnauthorized(await org.core.with({ apiKey: org.adminKey, orgId: other.orgId }).get('/v1/api-keys'));
  });

  test('appId is accepted in place of orgId', async () => {
    const res = await new ApiClient(t.coreUrl, {}).get('/v1/api-keys', { apiKey: org.adminKey, appId: org.orgId });
    expect(res.status).toBe(200);
  });

  test('a core key on the pro host, and a pro key on the core host', async () => {
    expectUnauthorized(await new ApiClient(t.proUrl, { apiKey: org.adminKey, orgId: org.orgId }).get('/v1/orderbook/engine/status'));
    expectUnauthorized(await new ApiClient(t.coreUrl, { apiKey: org.proKey, orgId: org.orgId }).get('/v1/organization'));
  });

  test('a production key in a sandbox deployment', async () => {
    const live = org.adminKey!.replace('kc_test_', 'kc_live_');
    const res = await org.core.with({ apiKey: live, orgId: org.orgId }).get('/v1/api-keys');
    expectUnauthorized(res);
    expect(res.body.error.message).toMatch(/production/);
  });

  test('a revoked key, at once', async () => {
    const created = await org.core.post('/v1/api-keys', { name: 'temp', scopes: ['read'] });
    expect(created.status).toBe(201);
    const temp = org.core.with({ apiKey: created.body.data.secret, orgId: org.orgId });
    expect((await temp.get('/v1/organization')).status).toBe(200);
    expect((await org.core.delete(`/v1/api-keys/${created.body.data.id}`)).status).toBe(200);
    expectUnauthorized(await temp.get('/v1/organization'));
  });

  test('GraphQL without credentials gets a GraphQL-shaped 401', async () => {
    const res = await new ApiClient(t.coreUrl, {}).graphql('{ organization { id } }');
    expect(res.status).toBe(401);
    expect(res.body.errors[0].extensions.code).toBe('UNAUTHORIZED');
  });
});

describe('authorisation (403 FORBIDDEN)', () => {
  test('core scopes: read keys only read, write keys only write, admin does everything', async () => {
    const read = await org.core.post('/v1/api-keys', { name: 'reader', scopes: ['read'] });
    const reader = org.core.with({ apiKey: read.body.data.secret, orgId: org.orgId });
    expect((await reader.get('/v1/organization')).status).toBe(200);
    const denied = await reader.post('/v1/api-keys', { name: 'x', scopes: ['read'] });
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe('FORBIDDEN');
    expect(denied.body.error.message).toMatch(/admin/);

    const write = await org.core.post('/v1/api-keys', { name: 'writer', scopes: ['write'] });
    const writer = org.core.with({ apiKey: write.body.data.secret, orgId: org.orgId });
    const writerRead = await writer.get('/v1/organization');
    expect(writerRead.status).toBe(403);
    expect(writerRead.body.error.message).toMatch(/'read'/);
  });

  test('pro permissions: the 403 names the missing permission', async () => {
    const created = await org.core.post('/v1/api-keys', { name: 'orders only', host: 'PRO', scopes: ['orderbook_order:read'] });
    expect(created.status).toBe(201);
    expect(created.body.data.secret).toMatch(/^kp_test_/);
    const res = await new ApiClient(t.proUrl, { apiKey: created.body.data.secret, orgId: org.orgId }).get('/v1/orderbook/engine/status');
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect(res.body.error.message).toContain('orderbook_market:read');
    expect((await org.pro.get('/v1/orderbook/engine/status')).status).toBe(200);
  });

  test('pro keys are not self-serve: an organisation without order-book access cannot create one', async () => {
    const noPro = await t.createOrg({ proAccess: false });
    expect(noPro.proKey).toBeUndefined();
    const res = await noPro.core.post('/v1/api-keys', { name: 'p', host: 'PRO', scopes: ['orderbook_order:read'] });
    expect(res.status).toBe(403);
  });
});
