import fc from 'fast-check';
import { useTestKeel } from '../../support/use-test-keel';

const { t, orgs: [org] } = useTestKeel({ RATE_LIMIT_SCALE: 1000 }, { orgs: 1 });

const paths = fc.oneof(
  fc.constantFrom('/v1/api-keys', '/v1/api-keys/00000000-0000-4000-8000-000000000000', '/v1/api-keys/x/rotate', '/v1/organization', '/graphql', '/v1/openapi.json', '/v1/'),
  fc.array(fc.constantFrom('v1', 'api-keys', '..', '%00', '%ZZ', '{id}', 'rotate', '😀', '?limit=-1', '?offset=x&limit=', '#'), { maxLength: 5 }).map((s) => `/${s.join('/')}`),
);
const bodies = fc.oneof(
  fc.json(),
  fc.string(),
  fc.constantFrom('{', '[]', 'null', '{"name":', '{"scopes":[{"a":1}],"name":"x"}', '{"query":"{ apiKeys(limit: -5) { total } }"}', '\u0000'),
  // Any code point, control characters and lone surrogates included, in otherwise valid bodies.
  fc.record({ name: fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.integer(), fc.constant(null)), scopes: fc.oneof(fc.array(fc.string({ unit: 'binary' })), fc.string()), tier: fc.string(), host: fc.string() }, { requiredKeys: [] }).map((o) => JSON.stringify(o)),
);
const credentials = fc.oneof(
  fc.constant({ apiKey: 'VALID', orgId: 'VALID' }),
  fc.record({ apiKey: fc.oneof(fc.string(), fc.constant('VALID')), orgId: fc.oneof(fc.uuid(), fc.string(), fc.constant('VALID')) }, { requiredKeys: [] }),
);

test('a few hundred malformed requests get only 4xx envelopes and the process stays up', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE'),
      paths,
      bodies,
      credentials,
      fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8', 'application/x-www-form-urlencoded'),
      fc.option(fc.string({ maxLength: 300 })),
      async (method, path, body, creds, contentType, idempotencyKey) => {
        const headers: Record<string, string> = { 'content-type': contentType };
        const apiKey = creds.apiKey === 'VALID' ? org.adminKey : creds.apiKey;
        const orgId = creds.orgId === 'VALID' ? org.orgId : creds.orgId;
        // Header values must be ByteStrings; fetch would refuse the rest before sending.
        if (apiKey !== undefined && /^[\x20-\x7e]*$/.test(apiKey)) headers.apiKey = apiKey;
        if (orgId !== undefined && /^[\x20-\x7e]*$/.test(orgId)) headers.orgId = orgId;
        if (idempotencyKey && /^[\x20-\x7e]*$/.test(idempotencyKey)) headers['Idempotency-Key'] = idempotencyKey;
        const res = await fetch(`${t.coreUrl}${path}`, { method, headers, body: method === 'GET' ? undefined : body });
        const text = await res.text();
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) {
          const parsed = JSON.parse(text);
          if (path.startsWith('/graphql')) expect(parsed.errors?.[0]?.extensions?.code ?? parsed.error?.code).toBeTruthy();
          else expect(typeof parsed.error.code).toBe('string');
        }
      },
    ),
    { numRuns: 300 },
  );
  expect((await fetch(`${t.coreUrl}/health`)).status).toBe(200);
});
