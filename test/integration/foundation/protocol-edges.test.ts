import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { useTestKeel } from '../../support/use-test-keel';
import { rawRequest, RawResponse, responsesUntilClose } from '../../support/raw-http';
import { createHost, listen } from '../../../src/server/host';
import { buildHostSchema, resolverServices } from '../../../src/schema';
import type { ApiClient } from '../../support/api-client';

const { t, orgs: [org] } = useTestKeel({ BODY_LIMIT_BYTES: 10_000 }, { orgs: 1 });

function credentials(client: ApiClient): string {
  return `apiKey: ${client.credentials.apiKey}\r\norgId: ${client.credentials.orgId}\r\n`;
}

function post(path: string, headers: string, body: string | Buffer): Buffer {
  const head = `POST ${path} HTTP/1.1\r\nHost: localhost\r\n${credentials(org.core)}${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head), Buffer.isBuffer(body) ? body : Buffer.from(body)]);
}

function expectEnvelope(res: RawResponse, status: number, code = 'BAD_REQUEST') {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(Number.isNaN(Date.parse(res.body.error.timestamp))).toBe(false);
  expect(res.body.error.requestId).toMatch(/\S{8,}/);
  expect(res.headers['x-request-id']).toBe(res.body.error.requestId);
}

describe('errors the HTTP layer raises answer in the envelope with a request id', () => {
  test('headers over Node’s limit (refused by its parser, before Fastify): 431', async () => {
    const res = await rawRequest(t.coreUrl, `GET /v1/api-keys HTTP/1.1\r\nHost: localhost\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectEnvelope(res, 431);
    expect(res.headers.connection).toBe('close');
  });

  test('a request line the parser cannot read: 400', async () => {
    expectEnvelope(await rawRequest(t.coreUrl, 'GET /v1/api-keys HTTP/1.1\r\nHost: localhost\r\nBad Header Name: x\r\n\r\n'), 400);
  });

  test('a URL over 8,192 characters: 414, before authentication', async () => {
    const res = await rawRequest(t.coreUrl, `GET /v1/api-keys?name=${'a'.repeat(9_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    expectEnvelope(res, 414);
  });

  test('a body over BODY_LIMIT_BYTES: 413', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(20_000), scopes: ['read'] });
    expectEnvelope(await rawRequest(t.coreUrl, post('/v1/api-keys', 'Content-Type: application/json\r\n', body)), 413);
  });

  test.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])('a %s body (JSON only): 415', async (type) => {
    expectEnvelope(await rawRequest(t.coreUrl, post('/v1/api-keys', `Content-Type: ${type}\r\n`, 'name=x')), 415);
  });

  test('malformed JSON: 400', async () => {
    expectEnvelope(await rawRequest(t.coreUrl, post('/v1/api-keys', 'Content-Type: application/json\r\n', '{"name": ')), 400);
  });
});

describe('an empty body sent as application/json is no body, as if none were sent', () => {
  /** What curl, Postman and the SDKs send for a request without a body: the JSON Content-Type, no bytes. */
  const emptyJson = (method: string, path: string, type = 'application/json') => org.core.request(method, path, { rawBody: '', headers: { 'content-type': type } });

  test('on the body-less routes: rotating a webhook secret and an API key, turning monitoring off, deleting a key', async () => {
    const webhook = (await org.core.post('/v1/webhooks', { url: 'https://93.184.216.34/hooks/keel', name: 'empty body', eventTypes: ['master.*'] })).body.data;
    const key = (await org.core.post('/v1/api-keys', { name: 'empty body', scopes: ['read'] })).body.data;
    const blockchainId = (await org.core.get('/v1/blockchains')).body.data[0].id;
    const wallet = (await org.core.post('/v1/master-wallets', { blockchainId, name: 'empty body' })).body.data;

    const rotatedSecret = await emptyJson('POST', `/v1/webhooks/${webhook.id}/secret/rotate`);
    expect(rotatedSecret.status).toBe(200);
    expect(rotatedSecret.body.data.secret).toMatch(/^whsec_/);
    const rotatedKey = await emptyJson('POST', `/v1/api-keys/${key.id}/rotate`, 'application/json; charset=utf-8');
    expect(rotatedKey.status).toBe(200);
    const off = await emptyJson('POST', `/v1/master-wallets/${wallet.id}/monitoring/${blockchainId}/disable`);
    expect(off.status).toBe(200);
    expect(off.body.data.monitoring).toEqual([{ blockchainId, enabled: false }]);
    expect((await emptyJson('DELETE', `/v1/api-keys/${key.id}`)).status).toBe(200);
  });

  test('a route that needs a body answers as it does to none: 422 naming the missing field, not 400 "not valid JSON"', async () => {
    const none = await org.core.request('POST', '/v1/api-keys');
    const empty = await emptyJson('POST', '/v1/api-keys');
    expect(empty.status).toBe(none.status);
    expect(empty.body.error.code).toBe(none.body.error.code);
    expect(empty.body.error.message).toBe(none.body.error.message);
  });

  test('on POST /graphql it is the usual missing query, as without a body', async () => {
    const none = await org.core.request('POST', '/graphql');
    const empty = await emptyJson('POST', '/graphql');
    expect(none.status).toBe(400);
    expect({ status: empty.status, body: empty.body }).toEqual({ status: none.status, body: none.body });
  });

  test('a body that is there and not JSON is still 400, blank or cut short', async () => {
    for (const body of [' ', '{"name": ']) {
      expectEnvelope(await rawRequest(t.coreUrl, post('/v1/api-keys', 'Content-Type: application/json\r\n', body)), 400);
    }
  });

  test('the body limit and the depth limit still hold', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(20_000), scopes: ['read'] });
    expectEnvelope(await rawRequest(t.coreUrl, post('/v1/api-keys', 'Content-Type: application/json\r\n', big)), 413);
    const deep = await org.core.request('POST', '/v1/api-keys', { rawBody: `{"name":${'['.repeat(200)}${']'.repeat(200)}}` });
    expect(deep.status).toBe(422);
  });

  test('JSON that would poison a prototype is still refused', async () => {
    const res = await org.core.request('POST', '/v1/api-keys', { rawBody: '{"name":"p","scopes":["read"],"__proto__":{"admin":true}}' });
    expect(res.status).toBe(400);
  });
});

describe('a Content-Encoding Keel does not decode is 415, never read as plain JSON', () => {
  const body = JSON.stringify({ name: 'encoded', scopes: ['read'] });

  test.each([
    ['gzip, with a gzip body', 'gzip', gzipSync(body)],
    ['gzip, with a plain body', 'gzip', Buffer.from(body)],
    ['br', 'br', Buffer.from(body)],
    ['an unknown coding', 'x-made-up', Buffer.from(body)],
  ])('%s', async (_name, encoding, bytes) => {
    const res = await rawRequest(t.coreUrl, post('/v1/api-keys', `Content-Type: application/json\r\nContent-Encoding: ${encoding}\r\n`, bytes));
    expectEnvelope(res, 415);
    const keys = await org.core.get('/v1/api-keys');
    expect(keys.body.data.map((k: { name: string }) => k.name)).not.toContain('encoded');
  });

  test('on /graphql too, in the GraphQL error shape', async () => {
    const query = JSON.stringify({ query: '{ organization { id } }' });
    const res = await rawRequest(t.coreUrl, post('/graphql', 'Content-Type: application/json\r\nContent-Encoding: gzip\r\n', gzipSync(query)));
    expect(res.status).toBe(415);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', status: 415 });
  });

  test('a request without a body is not refused for the header', async () => {
    const res = await rawRequest(t.coreUrl, `GET /v1/organization HTTP/1.1\r\nHost: localhost\r\n${credentials(org.core)}Content-Encoding: gzip\r\n\r\n`);
    expect(res.status).toBe(200);
  });

  test('identity is the plain body', async () => {
    const res = await rawRequest(t.coreUrl, post('/v1/api-keys', 'Content-Type: application/json\r\nContent-Encoding: identity\r\n', body));
    expect(res.status).toBe(201);
  });
});

describe('while a host closes, a request still arriving on an open connection is refused in the envelope', () => {
  /** A keep-alive connection with a GraphQL read whose body is still arriving: it holds the connection open through the close. */
  async function inFlight(url: string) {
    const { port } = new URL(url);
    const socket = connect({ host: '127.0.0.1', port: Number(port) });
    await once(socket, 'connect');
    const responses = responsesUntilClose(socket);
    const request = post('/graphql', 'Content-Type: application/json\r\n', JSON.stringify({ query: '{ organization { id } }' }));
    socket.write(request.subarray(0, -5));
    return { responses, finish: (pipelined: string) => socket.write(Buffer.concat([request.subarray(-5), Buffer.from(pipelined)])) };
  }

  test('a request pipelined after close() began: 503 SERVICE_UNAVAILABLE with Retry-After, and the connection closed; on /graphql in the GraphQL error shape', async () => {
    // A host of its own on this file's Keel: closing it leaves the file's host serving.
    const { platform, services } = t.keel;
    const schema = await buildHostSchema('core', platform.liveFeed.pubSub, { checked: false });
    const host = await listen(await createHost({ host: 'core', schema, platform, services: resolverServices(services) }), '127.0.0.1', 0);
    const [rest, graphql] = [await inFlight(host.url), await inFlight(host.url)];
    await sleep(100);
    const closed = host.close();
    await sleep(100);
    rest.finish(`GET /v1/api-keys HTTP/1.1\r\nHost: localhost\r\n${credentials(org.core)}\r\n`);
    graphql.finish(`GET /graphql?query=${encodeURIComponent('{ organization { id } }')} HTTP/1.1\r\nHost: localhost\r\n${credentials(org.core)}\r\n`);
    const [restAnswers, graphqlAnswers] = [await rest.responses, await graphql.responses];
    await closed;

    // The requests already arriving are served.
    expect([restAnswers[0].status, graphqlAnswers[0].status]).toEqual([200, 200]);
    const [refused, refusedGraphql] = [restAnswers[1], graphqlAnswers[1]];
    expectEnvelope(refused, 503, 'SERVICE_UNAVAILABLE');
    for (const res of [refused, refusedGraphql]) {
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      expect(res.headers.connection).toBe('close');
    }
    expect(refusedGraphql.status).toBe(503);
    expect(refusedGraphql.body.errors[0].extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE', requestId: refusedGraphql.headers['x-request-id'] });
  });
});
