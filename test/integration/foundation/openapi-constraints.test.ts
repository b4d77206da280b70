import { randomUUID } from 'node:crypto';
import { useTestKeel } from '../../support/use-test-keel';
import type { ApiClient } from '../../support/api-client';
import { undocumentedChecks } from '../../../rest-compat/constraints';
import { MAX_URL_LENGTH } from '../../../src/server/protocol-checks';
import { ERROR_STATUS, type ErrorCode } from '../../../src/platform/errors';
import { ERROR_CODE_DOCS } from '../../../rest-compat/error-codes';
import { HOST_API } from '../../../rest-compat/host-documents';

interface Parameter {
  name: string;
  in: string;
  required: boolean;
  schema: Record<string, any>;
}

const docs: Record<'core' | 'pro', any> = { core: undefined, pro: undefined };

// Every route of both hosts in a burst: this is not a rate-limit test.
const { t, orgs: [org] } = useTestKeel({ RATE_LIMIT_SCALE: 100 }, { orgs: 1 });
beforeAll(async () => {
  docs.core = (await org.core.get('/v1/openapi.json')).body;
  docs.pro = (await org.pro.get('/v1/openapi.json')).body;
});

const client = (host: 'core' | 'pro'): ApiClient => (host === 'core' ? org.core : org.pro);

function getRoutes(host: 'core' | 'pro') {
  return Object.entries(docs[host].paths as Record<string, { get?: { parameters: Parameter[] } }>)
    .filter(([, ops]) => ops.get)
    .map(([path, ops]) => ({
      path: path.replace(/\{(\w+)\}/g, (_m, name: string) => (/symbol/i.test(name) ? 'ETH-USDC' : randomUUID())),
      query: ops.get!.parameters.filter((p) => p.in === 'query'),
    }));
}

/** A value the document allows, for the parameters a probe must also send. */
function allowed(schema: Record<string, any>): string {
  if (schema.enum) return String(schema.enum[0]);
  if (schema.default !== undefined) return String(schema.default);
  if (schema.minimum !== undefined) return String(schema.minimum);
  return 'x';
}

/** Values just outside each bound, enum or format the document states for a parameter. */
function justOutside(schema: Record<string, any>): { rule: string; value: string }[] {
  const out: { rule: string; value: string }[] = [];
  if (schema.minimum !== undefined) out.push({ rule: `minimum ${schema.minimum}`, value: String(BigInt(schema.minimum) - 1n) });
  if (schema.maximum !== undefined) out.push({ rule: `maximum ${schema.maximum}`, value: String(BigInt(schema.maximum) + 1n) });
  if (schema.enum) out.push({ rule: 'enum', value: `${schema.enum[0]}x` });
  if (schema.maxLength !== undefined) out.push({ rule: `maxLength ${schema.maxLength}`, value: 'a'.repeat(schema.maxLength + 1) });
  if (schema.format === 'uuid') out.push({ rule: 'uuid', value: 'not-a-uuid' });
  if (schema.anyOf?.some((s: { format?: string }) => s.format === 'date-time')) out.push({ rule: 'date-time', value: '2026-01-01T25:00:00Z' });
  return out;
}

test('every class-validator check the server runs has a keyword in the document', () => {
  expect(undocumentedChecks()).toEqual([]);
});

test('the document states the enforced bounds, enums, defaults and formats', () => {
  const param = (host: 'core' | 'pro', path: string, name: string) =>
    (docs[host].paths[path].get.parameters as Parameter[]).find((p) => p.name === name)!.schema;
  expect(param('core', '/v1/api-keys', 'limit')).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
  expect(param('core', '/v1/api-keys', 'offset')).toMatchObject({ minimum: 0, default: 0 });
  expect(param('core', '/v1/api-keys', 'from')).toMatchObject({ anyOf: [{ format: 'date' }, { format: 'date-time' }] });
  expect(param('pro', '/v1/orderbook/markets/{marketSymbol}/candles', 'interval')).toMatchObject({ enum: ['1m', '5m', '15m', '1h', '4h', '1d'] });
  expect(param('pro', '/v1/orderbook/markets/{marketSymbol}/candles', 'count')).toMatchObject({ minimum: 1, maximum: 500, default: 100 });
  expect(param('pro', '/v1/orderbook/orders', 'status').enum).toEqual(expect.arrayContaining(['OPEN', 'FILLED', 'CANCELLED']));
  expect(param('core', '/v1/master-wallets/{masterId}/transactions', 'direction')).toMatchObject({ enum: ['incoming', 'outgoing'] });
  expect(param('core', '/v1/assets', 'blockchainId')).toMatchObject({ format: 'uuid' });
  const rotate = docs.core.components.schemas.RotateApiKeyInput.properties.gracePeriodSeconds;
  expect(rotate).toMatchObject({ maximum: 604800 });
});

test('the Idempotency-Key header is documented as the server takes it: 1 to 255 printable ASCII characters, no space', async () => {
  const schema = docs.core.components.parameters.IdempotencyKey.schema;
  expect(schema).toEqual({ type: 'string', minLength: 1, maxLength: 255, pattern: expect.any(String) });
  expect(docs.pro.components.parameters.IdempotencyKey.schema).toEqual(schema);
  const documented = (value: string) => new RegExp(schema.pattern, 'u').test(value) && value.length >= schema.minLength && value.length <= schema.maxLength;
  // Each value the document allows is taken; each it refuses is 422 INVALID_FIELD naming the header.
  const values = [randomUUID(), 'payout-2026/11#1', `~${'k'.repeat(253)}!`, '', 'two words', 'clé', 'x'.repeat(256)];
  expect(values.map(documented)).toEqual([true, true, true, false, false, false, false]);
  for (const value of values) {
    const res = await org.core.post('/v1/api-keys', { name: `idem-${randomUUID()}`, scopes: ['read'] }, { 'Idempotency-Key': value });
    const taken = res.status === 201;
    const refused = res.status === 422 && res.body.error.code === 'INVALID_FIELD' && res.body.error.details.fields[0].field === 'Idempotency-Key';
    expect({ value, taken, refused }).toEqual({ value, taken: documented(value), refused: !documented(value) });
  }
});

test.each(['core', 'pro'] as const)('on the %s host, a query value just outside a documented bound, enum or format is 422 naming it', async (host) => {
  let probes = 0;
  for (const { path, query } of getRoutes(host)) {
    const required = query.filter((p) => p.required);
    for (const parameter of query) {
      for (const { rule, value } of justOutside(parameter.schema)) {
        const params = new URLSearchParams(required.filter((p) => p.name !== parameter.name).map((p): [string, string] => [p.name, allowed(p.schema)]));
        params.set(parameter.name, value);
        const url = `${path}?${params}`;
        const res = await client(host).get(url);
        probes++;
        const seen = { path, parameter: parameter.name, rule, status: res.status, fields: res.body.error?.details?.fields?.map((f: { field: string }) => f.field) };
        // A value too long for the URL limit is refused before any argument is read.
        if (url.length > MAX_URL_LENGTH) expect(seen).toMatchObject({ status: 414 });
        else expect(seen).toEqual({ path, parameter: parameter.name, rule, status: 422, fields: expect.arrayContaining([parameter.name]) });
      }
    }
  }
  expect(probes).toBeGreaterThan(10);
});

describe('error responses name the codes the server sends, per host and per operation, from ERROR_STATUS', () => {
  const hosts = ['core', 'pro'] as const;
  const codes = Object.keys(ERROR_STATUS) as ErrorCode[];
  const shared = (host: 'core' | 'pro', status: number): string => docs[host].components.responses[`E${status}`]?.description ?? '';
  const named = (description: string) => [...description.matchAll(/\(([A-Z_]+)\)/g)].map((m) => m[1]);
  const operations = (host: 'core' | 'pro') =>
    Object.entries(docs[host].paths as Record<string, Record<string, { responses: Record<string, { description: string }> }>>).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, responses: op.responses })),
    );

  test.each(hosts)("on the %s host, each status's shared response names every code of that status the host sends", (host) => {
    for (const code of codes.filter((c) => ERROR_CODE_DOCS[c].hosts.includes(host))) {
      expect({ code, description: shared(host, ERROR_STATUS[code]) }).toEqual({ code, description: expect.stringContaining(`(${code})`) });
    }
  });

  test('every code of ERROR_STATUS is documented on a host that sends it: the vocabulary holds no code nothing sends', () => {
    const documented = codes.filter((code) => hosts.some((host) => named(shared(host, ERROR_STATUS[code])).includes(code)));
    expect(codes.filter((code) => !documented.includes(code))).toEqual([]);
  });

  test('the codes each host sends besides the general ones are on its documents', () => {
    expect(named(shared('core', 400))).toEqual(expect.arrayContaining(['BAD_REQUEST', 'INSUFFICIENT_FUNDS', 'INVALID_ADDRESS', 'INVALID_NETWORK', 'PAYMENT_FAILED', 'PAYMENT_EXPIRED', 'MONITORING_FAILED']));
    expect(named(shared('core', 404))).toEqual(['NOT_FOUND', 'WALLET_NOT_FOUND']);
    expect(named(shared('pro', 409))).toEqual(expect.arrayContaining(['CONFLICT', 'DUPLICATE_ENTRY', 'NOT_LEADER', 'MARKET_HALTED', 'TRADING_EXIT_REQUESTED', 'ORDER_NOT_CANCELLABLE', 'POST_ONLY_WOULD_TAKE']));
    expect(named(shared('pro', 422))).toEqual(expect.arrayContaining(['VALIDATION_ERROR', 'BELOW_MIN_NOTIONAL']));
    // Trading balances on the order-book host move money from master wallets.
    expect(named(shared('pro', 400))).toEqual(expect.arrayContaining(['INSUFFICIENT_FUNDS', 'INVALID_ADDRESS', 'INVALID_NETWORK']));
    // The order book's codes are not the core host's, nor the checkout's the order book's.
    expect(named(shared('core', 409))).not.toContain('NOT_LEADER');
    expect(named(shared('pro', 400))).not.toContain('PAYMENT_FAILED');
  });

  test.each(hosts)('on the %s host, a 409 documents Retry-After, which marks its transient refusals (NOT_LEADER, an Idempotency-Key in progress)', (host) => {
    const conflict = docs[host].components.responses.E409;
    expect(conflict.headers).toEqual({ 'Retry-After': { $ref: '#/components/headers/Retry-After' } });
    expect(conflict.description).toContain('details.reason IDEMPOTENCY_KEY_IN_PROGRESS and Retry-After');
    expect(docs[host].components.headers['Retry-After'].description).toContain('IDEMPOTENCY_KEY_IN_PROGRESS');
  });

  test("an operation's answers name its own codes, and not the codes only other operations send", () => {
    const response = (host: 'core' | 'pro', route: string, status: number) => named(operations(host).find((o) => o.route === route)!.responses[String(status)].description);
    // An off-tick price or off-lot quantity is INVALID_FIELD naming it; the minimum notional has a code of its own.
    expect(response('pro', 'POST /v1/orderbook/orders', 422)).toEqual(['VALIDATION_ERROR', 'MISSING_FIELD', 'INVALID_FIELD', 'BELOW_MIN_NOTIONAL']);
    expect(response('pro', 'POST /v1/orderbook/orders', 409)).toEqual(expect.arrayContaining(['CONFLICT', 'NOT_LEADER', 'MARKET_HALTED', 'TRADING_EXIT_REQUESTED', 'POST_ONLY_WOULD_TAKE']));
    expect(response('pro', 'DELETE /v1/orderbook/orders/{id}', 409)).toEqual(['CONFLICT', 'DUPLICATE_ENTRY', 'NOT_LEADER', 'ORDER_NOT_CANCELLABLE']);
    expect(response('pro', 'GET /v1/orderbook/markets', 422)).toEqual(['VALIDATION_ERROR', 'MISSING_FIELD', 'INVALID_FIELD']);
    expect(response('core', 'POST /v1/master-wallets/{masterId}/monitoring/{blockchainId}/enable', 400)).toContain('MONITORING_FAILED');
    expect(response('core', 'POST /v1/master-wallets/{masterId}/monitoring/{blockchainId}/disable', 400)).not.toContain('MONITORING_FAILED');
    expect(response('core', 'POST /v1/api-keys', 400)).not.toContain('PAYMENT_FAILED');
  });

  test.each(hosts)('on the %s host, every error response names only codes of its status that the host sends', (host) => {
    const wrong: string[] = [];
    for (const { route, responses } of operations(host)) {
      for (const [status, { description }] of Object.entries(responses)) {
        if (Number(status) < 400 || !description) continue;
        // The HTTP layer's refusals are BAD_REQUEST with a status of their own.
        const httpLevel = [413, 414, 415, 431].includes(Number(status));
        for (const code of named(description) as ErrorCode[]) {
          const sent = httpLevel ? code === 'BAD_REQUEST' : ERROR_STATUS[code] === Number(status) && ERROR_CODE_DOCS[code].hosts.includes(host);
          if (!sent) wrong.push(`${route} ${status} ${code}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  test("a route row's own codes are codes only some operations of its host send", () => {
    for (const api of Object.values(HOST_API)) {
      for (const row of api.routes.filter((r) => r.errors)) {
        expect({ route: `${row.method} ${row.path}`, codes: row.errors!.filter((code) => !ERROR_CODE_DOCS[code].routeOnly || !ERROR_CODE_DOCS[code].hosts.includes(api.host)) }).toEqual({ route: `${row.method} ${row.path}`, codes: [] });
      }
    }
  });
});
