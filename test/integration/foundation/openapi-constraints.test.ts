import { randomUUID } from 'node:crypto';
import { useTestKeel } from '../../support/use-test-keel';
import type { ApiClient } from '../../support/api-client';
import { undocumentedChecks } from '../../../rest-compat/constraints';
import { MAX_URL_LENGTH } from '../../../src/server/protocol-checks';

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
