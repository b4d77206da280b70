import { readFileSync } from 'node:fs';
import path from 'node:path';
import { useTestKeel } from '../../support/use-test-keel';
import { shippedSanctionsDirectory } from '../../../src/modules/aml/sanctions-files';

const listed = (list: string) =>
  readFileSync(path.join(shippedSanctionsDirectory(), `sanctioned_addresses_${list}.txt`), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
const ETH_LISTED = listed('ETH')[0];
const BTC_LISTED = listed('XBT')[0];
const CLEAN = '0x000000000000000000000000000000000000dEaD';
const addresses = (n: number) => Array.from({ length: n }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);

const { t, orgs: [org] } = useTestKeel({ KEEL_ROLES: 'api' }, { orgs: 1 });

const check = (body: unknown, client = org.core) => client.post('/v1/aml/check-batch', body);

describe('POST /v1/aml/check-batch', () => {
  test('screens each address in order; a listed EVM address matches in any case, with the entries it matched', async () => {
    const lower = ETH_LISTED.toLowerCase();
    const upper = `0x${ETH_LISTED.slice(2).toUpperCase()}`;
    const res = await check({ addresses: [lower, CLEAN, upper, BTC_LISTED] });
    expect(res.status).toBe(200);
    expect(res.body.totalChecked).toBe(4);
    expect(res.body.data.map((r: any) => [r.address, r.isSanctioned])).toEqual([
      [lower, true],
      [CLEAN, false],
      [upper, true],
      [BTC_LISTED, true],
    ]);
    expect(res.body.data[0].identifications).toContainEqual({
      category: 'SANCTIONS',
      name: 'OFAC SDN digital currency address (ETH)',
      description: expect.stringContaining('2024-09-27'),
      url: expect.stringMatching(/^https:\/\//),
      list: 'ETH',
      listedAddress: ETH_LISTED,
    });
    expect(res.body.data[1].identifications).toEqual([]);
    expect(res.body.data[3].identifications.map((i: any) => i.list)).toEqual(['XBT']);
    expect(res.body.screenedAgainst).toMatchObject({ listDate: '2024-09-27', source: expect.stringContaining('shipped snapshot') });
  });

  test.each([1, 50])('accepts %i addresses', async (n) => {
    const res = await check({ addresses: addresses(n) });
    expect(res.status).toBe(200);
    expect(res.body.totalChecked).toBe(n);
    expect(res.body.data).toHaveLength(n);
  });

  test.each([0, 51])('refuses %i addresses with 422 naming addresses, in the error envelope', async (n) => {
    const res = await check({ addresses: addresses(n) });
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: expect.stringMatching(/^(INVALID_FIELD|VALIDATION_ERROR)$/), requestId: expect.any(String), timestamp: expect.any(String) });
    expect(res.body.error.details.fields[0].field).toBe('addresses');
  });

  test('refuses a missing body field and an over-long address', async () => {
    expect((await check({})).status).toBe(422);
    const long = await check({ addresses: ['x'.repeat(129)] });
    expect(long.status).toBe(422);
    expect(long.body.error.details.fields[0].field).toMatch(/^addresses/);
  });

  test('needs the write scope (a POST): a read-only key gets 403, no key 401', async () => {
    const readOnly = await t.keel.services.apiKeys.issue({ organizationId: org.orgId, name: 'reader', host: 'core', scopes: ['read'], tier: 'Business' });
    const res = await check({ addresses: [CLEAN] }, org.core.with({ apiKey: readOnly.secret, orgId: org.orgId }));
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
    expect((await check({ addresses: [CLEAN] }, org.core.with({}))).status).toBe(401);
    // Reading which lists are in use is a GET: the read key may.
    const lists = await org.core.with({ apiKey: readOnly.secret, orgId: org.orgId }).get('/v1/aml/lists');
    expect(lists.status).toBe(200);
    expect(lists.body.data).toMatchObject({ listDate: '2024-09-27', addressCount: expect.any(Number) });
    expect(lists.body.data.lists).toContainEqual({ name: 'ETH', entries: listed('ETH').length });
  });

  test('GraphQL: the same check', async () => {
    const res = await org.core.graphql('mutation($a: [String!]!) { amlCheckBatch(input: { addresses: $a }) { totalChecked data { address isSanctioned identifications { list } } } }', { a: [ETH_LISTED.toLowerCase()] });
    expect(res.body.data.amlCheckBatch).toEqual({ totalChecked: 1, data: [{ address: ETH_LISTED.toLowerCase(), isSanctioned: true, identifications: [{ list: 'ETH' }] }] });
  });

  test('is documented in the OpenAPI document', async () => {
    const doc = (await org.core.get('/v1/openapi.json')).body;
    expect(doc.paths['/v1/aml/check-batch'].post).toBeDefined();
    expect(doc.paths['/v1/aml/lists'].get).toBeDefined();
    expect(doc.components.schemas.AmlCheckBatchInput.properties.addresses).toMatchObject({ minItems: 1, maxItems: 50 });
  });
});
