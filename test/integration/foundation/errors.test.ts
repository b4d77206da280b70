import Fastify from 'fastify';
import { useTestKeel } from '../../support/use-test-keel';
import { errorHandler } from '../../../src/server/error-handler';
import { createLogger } from '../../../src/platform/logger';
import { keyRefusingNode } from '../../support/key-refusing-node';

/** What the service logged at error level. */
const errorLines: string[] = [];
const { t, orgs: [org] } = useTestKeel({ BODY_LIMIT_BYTES: 10_000 }, { orgs: 1, logger: createLogger('error', { write: (line: string) => void errorLines.push(line) }) });

function expectEnvelope(body: any, code: string) {
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(Number.isNaN(Date.parse(body.error.timestamp))).toBe(false);
  expect(typeof body.error.requestId).toBe('string');
}

test('every response carries X-Request-Id; a well-formed client id is echoed, a bad one replaced', async () => {
  const minted = await org.core.get('/v1/organization');
  expect(minted.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  const echoed = await org.core.get('/v1/organization', { 'X-Request-Id': 'client-abc-12345' });
  expect(echoed.headers.get('x-request-id')).toBe('client-abc-12345');
  const replaced = await org.core.get('/v1/nope', { 'X-Request-Id': 'bad id with spaces' });
  expect(replaced.headers.get('x-request-id')).not.toBe('bad id with spaces');
  expect(replaced.body.error.requestId).toBe(replaced.headers.get('x-request-id'));
});

test('malformed JSON is 400 BAD_REQUEST', async () => {
  const res = await org.core.request('POST', '/v1/api-keys', { rawBody: '{"name": ' });
  expect(res.status).toBe(400);
  expectEnvelope(res.body, 'BAD_REQUEST');
});

test('a body that breaks the schema is 422 with details.fields', async () => {
  const many = await org.core.post('/v1/api-keys', { name: 7, scopes: 'read' });
  expect(many.status).toBe(422);
  expectEnvelope(many.body, 'VALIDATION_ERROR');
  expect(many.body.error.details.fields.map((f: any) => f.field).sort()).toEqual(['name', 'scopes']);

  const missing = await org.core.post('/v1/api-keys', { name: 'x' });
  expect(missing.status).toBe(422);
  expectEnvelope(missing.body, 'MISSING_FIELD');
  expect(missing.body.error.details.fields).toEqual([{ field: 'scopes', error: 'is required' }]);

  const invalid = await org.core.post('/v1/api-keys', { name: '', scopes: ['read'] });
  expect(invalid.status).toBe(422);
  expectEnvelope(invalid.body, 'INVALID_FIELD');

  const unknown = await org.core.post('/v1/api-keys', { name: 'x', scopes: ['read'], colour: 'red' });
  expect(unknown.status).toBe(422);
  expect(unknown.body.error.details.fields).toEqual([{ field: 'colour', error: 'is not a known field' }]);

  const notObject = await org.core.post('/v1/api-keys', [1, 2]);
  expect(notObject.status).toBe(400);
});

test('text holding the NUL character (U+0000) is 422 naming the field, in a body, a path or a GraphQL variable, and writes nothing', async () => {
  const keysBefore = (await org.core.get('/v1/api-keys')).body.total;
  const named = await org.core.post('/v1/api-keys', { name: 'a\u0000b', scopes: ['read'] });
  expect(named.status).toBe(422);
  expectEnvelope(named.body, 'INVALID_FIELD');
  expect(named.body.error.details.fields).toEqual([{ field: 'name', error: 'must not contain the NUL character (U+0000)' }]);

  const nested = await org.core.post('/v1/api-keys', { name: 'ok', scopes: ['read', '\u0000'] });
  expect(nested.status).toBe(422);
  expect(nested.body.error.details.fields[0].field).toBe('scopes.1');

  const inPath = await org.core.get('/v1/transfers/a%00b');
  expect(inPath.status).toBe(422);
  expect(inPath.body.error.details.fields[0].field).toBe('transferId');

  const graphql = await org.core.graphql('mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { id } }', { input: { name: 'a\u0000b', scopes: ['read'] } });
  expect(graphql.status).toBe(422);
  expect(graphql.body.errors[0].extensions).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'variables.input.name' }] } });

  expect((await org.core.get('/v1/api-keys')).body.total).toBe(keysBefore);
});

test('a lone surrogate in any string, or U+0000 in an object key, is 422 naming the field, never a 500, and writes nothing', async () => {
  const [chain] = (await org.core.get('/v1/blockchains')).body.data;
  const wallet = (await org.core.post('/v1/master-wallets', { blockchainId: chain.id, name: 'Text checks' })).body.data;
  const addresses = `/v1/master-wallets/${wallet.id}/addresses`;
  const addressesBefore = (await org.core.get(addresses)).body.total;

  const surrogate = await org.core.post(addresses, { metadata: { a: '\ud800' } });
  expect(surrogate.status).toBe(422);
  expectEnvelope(surrogate.body, 'INVALID_FIELD');
  expect(surrogate.body.error.details.fields).toEqual([{ field: 'metadata.a', error: 'must be well-formed Unicode (no lone surrogate such as \\ud800)' }]);

  const nulKey = await org.core.post(addresses, { metadata: { 'a\u0000': 1 } });
  expect(nulKey.status).toBe(422);
  expect(nulKey.body.error.details.fields).toEqual([{ field: 'metadata.a\u0000', error: 'the key must not contain the NUL character (U+0000)' }]);

  const surrogateKey = await org.core.post(addresses, { metadata: { nested: { '\udc00': 'x' } } });
  expect(surrogateKey.status).toBe(422);
  expect(surrogateKey.body.error.details.fields[0]).toEqual({ field: 'metadata.nested.\udc00', error: 'the key must be well-formed Unicode (no lone surrogate such as \\ud800)' });

  const graphql = await org.core.graphql('mutation ($id: ID!, $input: CreateAddressInput!) { createAddress(masterWalletId: $id, input: $input) { id } }', { id: wallet.id, input: { name: 'x\ud83d' } });
  expect(graphql.status).toBe(422);
  expect(graphql.body.errors[0].extensions).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'variables.input.name' }] } });

  // Escapes GraphQL itself decodes: a string literal of the document, and variables sent as JSON text over GET.
  const literal = await org.core.graphql('mutation { createApiKey(input: {name: "a\\u0000b", scopes: ["read"]}) { id } }');
  expect(literal.status).toBe(400);
  expect(literal.body.errors[0]).toMatchObject({ message: expect.stringMatching(/NUL character/), extensions: { code: 'BAD_REQUEST' } });
  const overGet = await org.core.get(`/graphql?query=${encodeURIComponent('query ($s: String) { organization { id } }')}&variables=${encodeURIComponent('{"s":"a\\u0000"}')}`);
  expect(overGet.status).toBe(422);
  expect(overGet.body.errors?.[0]?.extensions ?? overGet.body.error).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: 'variables.s' }] } });

  expect((await org.core.get(addresses)).body.total).toBe(addressesBefore);
  // A surrogate pair is one well-formed character.
  expect((await org.core.post(addresses, { name: 'Order \ud83d\ude00', metadata: { '\ud83d\ude00': 'ok' } })).status).toBe(201);
});

test('objects and arrays nested more than BODY_MAX_DEPTH (32) deep are 422 naming where, in a body or GraphQL variables, 400 in a document, never a 500, and write nothing', async () => {
  const [chain] = (await org.core.get('/v1/blockchains')).body.data;
  const walletsBefore = (await org.core.get('/v1/master-wallets')).body.total;
  // JSON text: JSON.stringify itself recurses. Arrays nest in 2 bytes a level, within this file's 10,000-byte body limit.
  const nestedJson = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;
  const tooDeep = 'must not nest objects and arrays more than 32 deep';

  // The body is depth 1 and metadata depth 2: 30 arrays inside it are the most.
  const walletBody = (levels: number) => `{"blockchainId":"${chain.id}","name":"Deep","metadata":{"a":${nestedJson(levels)}}}`;
  const rest = await org.core.request('POST', '/v1/master-wallets', { rawBody: walletBody(4_000) });
  expect(rest.status).toBe(422);
  expectEnvelope(rest.body, 'INVALID_FIELD');
  expect(rest.body.error.details.fields).toEqual([{ field: `metadata.a${'.0'.repeat(30)}`, error: tooDeep }]);
  expect((await org.core.request('POST', '/v1/master-wallets', { rawBody: walletBody(31) })).status).toBe(422);

  const mutation = JSON.stringify('mutation ($id: ID!, $m: JSONObject) { createMasterWallet(input: {blockchainId: $id, name: "Deep", metadata: $m}) { id } }');
  const graphql = await org.core.request('POST', '/graphql', { rawBody: `{"query":${mutation},"variables":{"id":"${chain.id}","m":{"a":${nestedJson(4_000)}}}}` });
  expect(graphql.status).toBe(422);
  expect(graphql.body.errors[0].extensions).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field: `variables.m.a${'.0'.repeat(29)}`, error: tooDeep }] } });

  // (Past 500 levels of any brackets a document is refused before it is parsed: graphql-limits.test.ts.)
  const literal = await org.core.graphql(`mutation { createMasterWallet(input: {blockchainId: "${chain.id}", name: "Deep", metadata: {a: ${nestedJson(400)}}}) { id } }`);
  expect(literal.status).toBe(400);
  expect(literal.body.errors[0]).toMatchObject({ message: expect.stringContaining(tooDeep), extensions: { code: 'BAD_REQUEST' } });

  expect((await org.core.get('/v1/master-wallets')).body.total).toBe(walletsBefore);
  expect((await org.core.request('POST', '/v1/master-wallets', { rawBody: walletBody(30) })).status).toBe(201);
  expect((await org.core.graphql(`mutation { createMasterWallet(input: {blockchainId: "${chain.id}", name: "Deep", metadata: {a: ${nestedJson(28)}}}) { id } }`)).body.data.createMasterWallet.id).toBeDefined();
});

test('an unknown route is 404 NOT_FOUND in the envelope', async () => {
  const res = await org.core.get('/v1/does-not-exist');
  expect(res.status).toBe(404);
  expectEnvelope(res.body, 'NOT_FOUND');
});

test('a body over the size limit is 413 in the envelope', async () => {
  const res = await org.core.post('/v1/api-keys', { name: 'x'.repeat(20_000), scopes: ['read'] });
  expect(res.status).toBe(413);
  expectEnvelope(res.body, 'BAD_REQUEST');
});

test('GraphQL errors carry code, details and requestId in extensions', async () => {
  const res = await org.core.graphql('mutation { createApiKey(input: {name: "", scopes: ["read"]}) { id } }');
  const ext = res.body.errors[0].extensions;
  expect(ext.code).toBe('INVALID_FIELD');
  expect(ext.details.fields[0].field).toBe('name');
  expect(typeof ext.requestId).toBe('string');
  const parse = await org.core.graphql('{ organization { ');
  expect(parse.body.errors[0].extensions.code).toBe('BAD_REQUEST');
});

test('an unexpected exception is a 500 with no stack, SQL or secret in the body', async () => {
  const app = Fastify();
  app.setErrorHandler(errorHandler(createLogger('silent')));
  app.get('/boom', async () => {
    throw new Error('select * from api_key_secrets where secret_hash = kc_test_SECRET at Object.<anonymous> (/src/x.ts:1:1)');
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const address = app.server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${address.port}/boom`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text).error.code).toBe('INTERNAL_ERROR');
    expect(text).not.toMatch(/select|kc_test|\.ts:|stack/i);
  } finally {
    await app.close();
  }
});

test("a resolver's internal error from a node whose URL carries a key is logged with its code and stack, without the key", async () => {
  const KEY = 'SECRETKEY0123456789';
  const node = await keyRefusingNode(KEY);
  const read = jest.spyOn(t.keel.services.organizations, 'get');
  try {
    // A service's own error around the node's (a code ethers gives to no unanswered request: INTERNAL_ERROR).
    read.mockRejectedValueOnce(new Error('the balance could not be read', { cause: await node.balanceReadError('keel', 'hunter2pw') }));
    const before = errorLines.length;
    const res = await org.core.graphql('{ organization { id } }');
    expect(res.body.errors[0].extensions.code).toBe('INTERNAL_ERROR');
    const logged = errorLines.slice(before).map((l) => JSON.parse(l));
    expect(logged).toEqual([expect.objectContaining({ msg: 'graphql resolver error' })]);
    expect(logged[0].err).toMatchObject({
      message: 'the balance could not be read',
      cause: {
        message: 'the balance could not be read',
        stack: expect.stringMatching(/^Error: the balance could not be read\n\s+at /),
        cause: { code: 'SERVER_ERROR', message: 'server response 401 Unauthorized', stack: expect.stringMatching(/^Error: server response 401 Unauthorized\n\s+at /) },
      },
    });
    expect(JSON.stringify(logged)).not.toMatch(/SECRETKEY|hunter2pw/);
  } finally {
    read.mockRestore();
    await node.close();
  }
});

test('/health, /ready and /metrics answer without credentials', async () => {
  for (const base of [t.coreUrl, t.proUrl]) {
    expect((await fetch(`${base}/health`)).status).toBe(200);
    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', postgres: 'ok', redis: 'ok' });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('keel_http_requests_total');
  }
});
