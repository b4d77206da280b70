import { useTestKeel } from '../../support/use-test-keel';

const PUBLIC_URL = 'https://93.184.216.34/hooks/keel';

const { t, orgs: [org, other] } = useTestKeel({ KEEL_ROLES: 'api' }, { orgs: 2 });

const create = (client = org.core, body: Record<string, unknown> = {}) =>
  client.post('/v1/webhooks', { url: PUBLIC_URL, name: 'orders', eventTypes: ['master.*'], ...body });

describe('creating a subscription', () => {
  test('returns the subscription with its signing secret, once', async () => {
    const res = await create();
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ url: PUBLIC_URL, name: 'orders', eventTypes: ['master.*'], isActive: true, developerId: expect.any(String) });
    expect(res.body.data.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);

    const fetched = await org.core.get(`/v1/webhooks/${res.body.data.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body.data.secret).toBeNull();
    expect(JSON.stringify((await org.core.get('/v1/webhooks')).body)).not.toContain(res.body.data.secret);
  });

  test("the document says the secret is shown once, a deliberate difference from the spec, and that rotating gives a new one", async () => {
    const doc = (await org.core.get('/v1/openapi.json')).body;
    const { description } = doc.components.schemas.WebhookSubscription.properties.secret;
    expect(description).toMatch(/create and rotate/);
    expect(description).toMatch(/null on reads and lists/);
    expect(description).toMatch(/spec/);
    expect(description).toContain('POST /v1/webhooks/{subscriptionId}/secret/rotate');
  });

  test.each([
    ['plain http', 'http://93.184.216.34/hook', 'must use https'],
    ['loopback', 'https://127.0.0.1/hook', 'not a public address'],
    ['IPv6 loopback', 'https://[::1]/hook', 'not a public address'],
    ['a private network', 'https://10.1.2.3/hook', 'not a public address'],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data', 'not a public address'],
    ['a name resolving to loopback', 'https://localhost/hook', 'resolves to'],
    ['not a URL', 'hooks.example', 'absolute URL'],
  ])('refuses %s with 422 INVALID_FIELD on url', async (_what, url, message) => {
    const res = await create(org.core, { url });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('INVALID_FIELD');
    expect(res.body.error.details.fields[0].field).toBe('url');
    expect(res.body.error.message).toContain(message);
  });

  test('accepts dotted names, wildcards and the upper-case identifiers spelled as the spec spells them', async () => {
    const eventTypes = ['address.created', 'payment_link.*', '*', 'DEPOSITE_INCOMING_DETECTED', 'TRANFER_FAILED', 'DEPOSITE_ADDRESS_CREATED'];
    const res = await create(org.core, { eventTypes });
    expect(res.status).toBe(201);
    expect(res.body.data.eventTypes).toEqual(eventTypes);
  });

  test('refuses unknown event types, naming each one', async () => {
    const res = await create(org.core, { eventTypes: ['master.created', 'TRANSFER_FAILED', 'order.*'] });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('INVALID_FIELD');
    expect(res.body.error.message).toContain('TRANSFER_FAILED, order.*');
  });

  test('an organisation has at most WEBHOOK_MAX_ACTIVE_SUBSCRIPTIONS (default 50) active: one more, created or reactivated, is 409 CONFLICT', async () => {
    const capped = await t.createOrg();
    const seeded = (isActive: boolean) => ({ organizationId: capped.orgId, name: 'seeded', url: PUBLIC_URL, eventTypes: ['address.*'], isActive });
    await t.keel.platform.db('webhook_subscriptions').insert([...Array.from({ length: 48 }, () => seeded(true)), seeded(false)]);
    // Concurrent creations take turns: two fit, two do not.
    const made = await Promise.all(Array.from({ length: 4 }, (_, i) => create(capped.core, { name: `hook ${i}` })));
    expect(made.map((r) => r.status).sort()).toEqual([201, 201, 409, 409]);
    const refused = made.find((r) => r.status === 409)!;
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: { limit: 50 } });
    expect(refused.body.error.message).toContain('delete or deactivate one first');

    const { id } = made.find((r) => r.status === 201)!.body.data;
    expect((await capped.core.put(`/v1/webhooks/${id}`, { isActive: false })).status).toBe(200);
    expect((await create(capped.core)).status).toBe(201);
    const reactivated = await capped.core.put(`/v1/webhooks/${id}`, { isActive: true });
    expect(reactivated.status).toBe(409);
    expect(reactivated.body.error.code).toBe('CONFLICT');
    expect((await capped.core.get('/v1/webhooks?isActive=true')).body.total).toBe(50);
  });

  test('publishes the catalogue, including the upper-case mapping', async () => {
    const res = await org.core.get('/v1/webhooks/event-types');
    expect(res.status).toBe(200);
    expect(res.body.data.names).toContain('master_settlement_rule.executed');
    expect(res.body.data.names).toContain('agent_payment.executed');
    expect(res.body.data.wildcards).toEqual(['address.*', 'master.*', 'payment_link.*', 'payment_link_transfer.*', 'payment_intent.*', 'agent.*', 'agent_payment.*', '*']);
    expect(res.body.data.upperCase).toContainEqual({ identifier: 'DEPOSITE_INCOMING_DETECTED', covers: ['address.incoming_transfer', 'master.incoming_transfer'] });
  });
});

describe('managing subscriptions', () => {
  test('lists with limit, offset and isActive in the core list envelope', async () => {
    const a = await create(org.core, { name: 'a' });
    await org.core.put(`/v1/webhooks/${a.body.data.id}`, { isActive: false });
    const inactive = await org.core.get('/v1/webhooks?isActive=false');
    expect(inactive.status).toBe(200);
    expect(inactive.body.data.map((s: any) => s.id)).toEqual([a.body.data.id]);
    expect(inactive.body).toMatchObject({ total: 1, hasMore: false });
    const page = await org.core.get('/v1/webhooks?limit=1&offset=0');
    expect(page.body.data).toHaveLength(1);
    expect(page.body.hasMore).toBe(true);
  });

  test('updates url, eventTypes and isActive with the same checks as creation', async () => {
    const { id } = (await create()).body.data;
    const updated = await org.core.put(`/v1/webhooks/${id}`, { url: 'https://93.184.216.35/v2', eventTypes: ['address.*'], isActive: false });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ url: 'https://93.184.216.35/v2', eventTypes: ['address.*'], isActive: false, secret: null });
    expect((await org.core.put(`/v1/webhooks/${id}`, { url: 'https://10.0.0.1/' })).status).toBe(422);
    expect((await org.core.put(`/v1/webhooks/${id}`, { eventTypes: ['nope'] })).status).toBe(422);
  });

  test('rotating the secret returns a new one', async () => {
    const created = (await create()).body.data;
    const rotated = await org.core.post(`/v1/webhooks/${created.id}/secret/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.secret).not.toBe(created.secret);
  });

  test('delete removes it; afterwards it is 404', async () => {
    const { id } = (await create()).body.data;
    expect((await org.core.delete(`/v1/webhooks/${id}`)).status).toBe(200);
    expect((await org.core.get(`/v1/webhooks/${id}`)).status).toBe(404);
  });

  test("another organisation's subscriptions and delivery records are 404", async () => {
    const { id } = (await create()).body.data;
    const [row] = await t.keel.platform
      .db('webhook_deliveries')
      .insert({ organizationId: org.orgId, subscriptionId: id, eventId: '00000000-0000-4000-8000-000000000001', eventSequence: 1, type: 'master.created', payload: {} })
      .returning('id');
    for (const res of [
      await other.core.get(`/v1/webhooks/${id}`),
      await other.core.put(`/v1/webhooks/${id}`, { isActive: false }),
      await other.core.delete(`/v1/webhooks/${id}`),
      await other.core.post(`/v1/webhooks/${id}/secret/rotate`),
      await other.core.post(`/v1/webhooks/${id}/recover`, { since: new Date(0).toISOString() }),
      await other.core.get(`/v1/webhook-events/${row.id}`),
      await other.core.post(`/v1/webhook-events/${row.id}/resend`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect((await other.core.get(`/v1/webhook-events?subscriptionId=${id}`)).body).toMatchObject({ data: [], total: 0 });
    expect((await org.core.get(`/v1/webhook-events/${row.id}`)).status).toBe(200);
  });

  test('a read-only key may list but not create', async () => {
    const key = await org.core.post('/v1/api-keys', { name: 'ro', scopes: ['read'] });
    const readOnly = org.core.with({ apiKey: key.body.data.secret, orgId: org.orgId });
    expect((await readOnly.get('/v1/webhooks')).status).toBe(200);
    const refused = await create(readOnly);
    expect(refused.status).toBe(403);
  });

  test('the same operations work over GraphQL', async () => {
    const res = await org.core.graphql(
      `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id secret eventTypes } }`,
      { input: { url: PUBLIC_URL, name: 'gql', eventTypes: ['SWAP_EXECUTED'] } },
    );
    expect(res.body.errors).toBeUndefined();
    const id = res.body.data.createWebhook.id;
    const read = await org.core.graphql(`query($id: ID!) { webhook(id: $id) { id name secret } }`, { id });
    expect(read.body.data.webhook).toEqual({ id, name: 'gql', secret: null });
  });
});

describe('signing events, whose data carries the signature, are routed by admin credentials alone', () => {
  const refusedForSignatures = (res: { status: number; body: any }) => {
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect(res.body.error.message).toMatch(/^Only admin credentials may .*: signing events carry the signature/);
  };

  test('a write key may not subscribe to them, point a subscription receiving them elsewhere, switch it off, rotate its secret, delete it, nor resend or recover its deliveries, over REST or GraphQL', async () => {
    const key = await org.core.post('/v1/api-keys', { name: 'writer', scopes: ['read', 'write'] });
    const writer = org.core.with({ apiKey: key.body.data.secret, orgId: org.orgId });
    for (const eventTypes of [['SIGNED_SUCCESS'], ['SIGNED_FAILED'], ['master.signed_success'], ['address.*'], ['*']]) refusedForSignatures(await create(writer, { eventTypes }));

    const signing = (await create(org.core, { eventTypes: ['SIGNED_SUCCESS'] })).body.data;
    const [delivery] = await t.keel.platform
      .db('webhook_deliveries')
      .insert({ organizationId: org.orgId, subscriptionId: signing.id, eventId: '00000000-0000-4000-8000-000000000002', eventSequence: 2, type: 'master.signed_success', payload: { data: { signature: '0xf86b' } }, status: 'FAILED' })
      .returning('id');
    refusedForSignatures(await writer.put(`/v1/webhooks/${signing.id}`, { url: 'https://93.184.216.35/mine' }));
    refusedForSignatures(await writer.put(`/v1/webhooks/${signing.id}`, { eventTypes: ['address.created'] }));
    refusedForSignatures(await writer.post(`/v1/webhook-events/${delivery.id}/resend`));
    refusedForSignatures(await writer.post(`/v1/webhooks/${signing.id}/recover`, { since: new Date(0).toISOString() }));
    const overGraphql = await writer.graphql('mutation($id: ID!) { updateWebhook(id: $id, input: { url: "https://93.184.216.35/mine" }) { id } }', { id: signing.id });
    expect(overGraphql.body.errors[0].extensions.code).toBe('FORBIDDEN');

    // Its log still holds a signing event after an admin narrowed its types: a retry would go to the new URL.
    expect((await org.core.put(`/v1/webhooks/${signing.id}`, { eventTypes: ['address.created'] })).status).toBe(200);
    refusedForSignatures(await writer.put(`/v1/webhooks/${signing.id}`, { url: 'https://93.184.216.35/mine' }));
    expect((await org.core.get(`/v1/webhooks/${signing.id}`)).body.data.url).toBe(PUBLIC_URL);
    expect((await org.core.get(`/v1/webhook-events/${delivery.id}`)).body.data.status).toBe('FAILED');

    // Nor switch it off, rotate its secret or delete it (and its log): it is an admin's to manage.
    refusedForSignatures(await writer.put(`/v1/webhooks/${signing.id}`, { isActive: false }));
    refusedForSignatures(await writer.post(`/v1/webhooks/${signing.id}/secret/rotate`, {}));
    refusedForSignatures(await writer.delete(`/v1/webhooks/${signing.id}`));
    // Anything else stays the write scope's; admin credentials may do it all.
    expect((await writer.put(`/v1/webhooks/${signing.id}`, { name: 'renamed' })).status).toBe(200);
    const own = await create(writer, { eventTypes: ['address.created', 'payment_link.*'] });
    expect(own.status).toBe(201);
    expect((await writer.put(`/v1/webhooks/${own.body.data.id}`, { url: 'https://93.184.216.35/mine' })).status).toBe(200);
    expect((await org.core.put(`/v1/webhooks/${signing.id}`, { url: 'https://93.184.216.35/admin', eventTypes: ['*'] })).status).toBe(200);
    expect((await org.core.post(`/v1/webhook-events/${delivery.id}/resend`)).status).toBe(200);
  });
});
