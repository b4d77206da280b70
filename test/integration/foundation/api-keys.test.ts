import { useTestKeel } from '../../support/use-test-keel';

const { t, orgs: [org, other] } = useTestKeel({}, { orgs: 2 });

test('creating a key returns its secret once; listing never shows secrets', async () => {
  const created = await org.core.post('/v1/api-keys', { name: 'ci', scopes: ['read', 'write'], tier: 'Pro' });
  expect(created.status).toBe(201);
  expect(created.body.data).toMatchObject({ name: 'ci', scopes: ['read', 'write'], tier: 'Pro', status: 'ACTIVE', host: 'CORE' });
  expect(created.body.data.secret.startsWith(created.body.data.prefix)).toBe(true);

  const list = await org.core.get('/v1/api-keys');
  expect(list.status).toBe(200);
  // Onboarding's admin and trading keys, and this one.
  expect(list.body).toMatchObject({ total: 3, hasMore: false });
  expect(JSON.stringify(list.body)).not.toContain(created.body.data.secret);
  expect(list.body.data.every((k: any) => k.secret === undefined)).toBe(true);

  const one = await org.core.get(`/v1/api-keys/${created.body.data.id}`);
  expect(one.body.data.id).toBe(created.body.data.id);
});

test('unknown scopes are refused with the field named', async () => {
  const res = await org.core.post('/v1/api-keys', { name: 'bad', scopes: ['superuser'] });
  expect(res.status).toBe(422);
  expect(res.body.error.code).toBe('INVALID_FIELD');
  expect(res.body.error.details.fields[0].field).toBe('scopes');
});

test('rotation: a new secret, the old one valid for the grace period, then 401', async () => {
  const created = await org.core.post('/v1/api-keys', { name: 'rotating', scopes: ['read'] });
  const oldClient = org.core.with({ apiKey: created.body.data.secret, orgId: org.orgId });
  const rotated = await org.core.post(`/v1/api-keys/${created.body.data.id}/rotate`, { gracePeriodSeconds: 1 });
  expect(rotated.status).toBe(200);
  expect(rotated.body.data.secret).not.toBe(created.body.data.secret);
  expect(rotated.body.data.previousSecretExpiresAt).toBeTruthy();
  const newClient = org.core.with({ apiKey: rotated.body.data.secret, orgId: org.orgId });
  expect((await oldClient.get('/v1/organization')).status).toBe(200);
  expect((await newClient.get('/v1/organization')).status).toBe(200);
  await new Promise((r) => setTimeout(r, 1_200));
  expect((await oldClient.get('/v1/organization')).status).toBe(401);
  expect((await newClient.get('/v1/organization')).status).toBe(200);
});

test('rotation without a body keeps the old secret for the default 24 hours', async () => {
  const created = await org.core.post('/v1/api-keys', { name: 'default grace', scopes: ['read'] });
  const rotated = await org.core.post(`/v1/api-keys/${created.body.data.id}/rotate`);
  expect(rotated.status).toBe(200);
  const hours = (Date.parse(rotated.body.data.previousSecretExpiresAt) - Date.now()) / 3_600_000;
  expect(hours).toBeGreaterThan(23.9);
  expect((await org.core.with({ apiKey: created.body.data.secret, orgId: org.orgId }).get('/v1/organization')).status).toBe(200);
});

test("another organisation's key is a 404 for every key operation", async () => {
  const theirs = await other.core.post('/v1/api-keys', { name: 'theirs', scopes: ['read'] });
  const id = theirs.body.data.id;
  for (const res of [
    await org.core.get(`/v1/api-keys/${id}`),
    await org.core.post(`/v1/api-keys/${id}/rotate`),
    await org.core.delete(`/v1/api-keys/${id}`),
    await org.core.get('/v1/api-keys/not-a-uuid'),
  ]) {
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  }
  expect((await other.core.with({ apiKey: theirs.body.data.secret, orgId: other.orgId }).get('/v1/organization')).status).toBe(200);
});

test('the same operations over GraphQL', async () => {
  const res = await org.core.graphql(
    'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { id secret scopes } }',
    { input: { name: 'gql', scopes: ['read'] } },
  );
  expect(res.body.data.createApiKey.secret).toMatch(/^kc_test_/);
  const revoked = await org.core.graphql('mutation($id: ID!) { revokeApiKey(id: $id) { status revokedAt } }', { id: res.body.data.createApiKey.id });
  expect(revoked.body.data.revokeApiKey.status).toBe('REVOKED');
});
