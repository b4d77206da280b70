import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getIntrospectionQuery } from 'graphql';
import { loadConfig } from '../../../src/platform/config';
import { useTestKeel } from '../../support/use-test-keel';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
/** The run's dev chains, listed as a production deployment lists its nodes (production refuses dev chains). */
const PRODUCTION_CHAINS = JSON.stringify((JSON.parse(process.env.KEEL_CHAINS!) as Record<string, unknown>[]).map((chain) => ({ ...chain, dev: false })));
const PRODUCTION = { KEEL_ENV: 'production', KEEL_MASTER_KEY: process.env.KEEL_MASTER_KEY, KEEL_CHAINS: PRODUCTION_CHAINS };

describe('GraphQL introspection', () => {
  test('is on in sandbox and off in production unless GRAPHQL_INTROSPECTION says otherwise', () => {
    expect(loadConfig({}).GRAPHQL_INTROSPECTION).toBe(true);
    expect(loadConfig(PRODUCTION).GRAPHQL_INTROSPECTION).toBe(false);
    expect(loadConfig({ ...PRODUCTION, GRAPHQL_INTROSPECTION: 'true' }).GRAPHQL_INTROSPECTION).toBe(true);
    expect(loadConfig({ GRAPHQL_INTROSPECTION: 'false' }).GRAPHQL_INTROSPECTION).toBe(false);
  });
});

describe('the GraphQL explorer', () => {
  test('is on in sandbox and off in production unless GRAPHQL_EXPLORER says otherwise', () => {
    expect(loadConfig({}).GRAPHQL_EXPLORER).toBe(true);
    expect(loadConfig(PRODUCTION).GRAPHQL_EXPLORER).toBe(false);
    expect(loadConfig({ ...PRODUCTION, GRAPHQL_EXPLORER: 'true' }).GRAPHQL_EXPLORER).toBe(true);
    expect(loadConfig({ GRAPHQL_EXPLORER: 'false' }).GRAPHQL_EXPLORER).toBe(false);
  });
});

describe('a production Keel with METRICS_TOKEN set', () => {
  const { t, orgs: [org] } = useTestKeel({ KEEL_ENV: 'production', KEEL_CHAINS: PRODUCTION_CHAINS, METRICS_TOKEN }, { orgs: 1 });

  test('refuses the introspection query and still answers ordinary ones', async () => {
    const introspection = await org.core.graphql(getIntrospectionQuery());
    expect(introspection.status).toBe(400);
    expect(introspection.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(JSON.stringify(introspection.body)).not.toContain('createApiKey');
    const ordinary = await org.core.graphql('{ organization { id } }');
    expect(ordinary.body).toEqual({ data: { organization: { id: org.orgId } } });
  });

  test('answers a browser opening /graphql as any client (no explorer) and still serves /docs', async () => {
    const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    const anonymous = await fetch(`${t.coreUrl}/graphql`, { headers: browser });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toMatch(/json/);
    expect(((await anonymous.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe('UNAUTHORIZED');
    const withKey = await org.core.get('/graphql', browser);
    expect(withKey.status).toBe(400);
    expect(withKey.headers.get('content-type')).toMatch(/json/);
    expect(JSON.stringify(withKey.body)).toContain('query');
    for (const base of [t.coreUrl, t.proUrl]) {
      expect((await fetch(`${base}/graphql/explorer/app.js`)).status).toBe(404);
      const docs = await fetch(`${base}/docs`);
      expect(docs.status).toBe(200);
      expect(docs.headers.get('content-security-policy')).toContain("script-src 'self'");
    }
  });

  test('answers /metrics only with the bearer token; without it 401 in the envelope', async () => {
    for (const base of [t.coreUrl, t.proUrl]) {
      for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef', METRICS_TOKEN]) {
        const res = await fetch(`${base}/metrics`, { headers: authorization ? { authorization } : {} });
        expect(res.status).toBe(401);
        const body = (await res.json()) as { error: Record<string, unknown> };
        expect(body.error).toMatchObject({ code: 'UNAUTHORIZED', requestId: expect.any(String) });
        expect(JSON.stringify(body)).not.toContain(METRICS_TOKEN);
      }
      const ok = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('keel_http_requests_total');
    }
  });
});

test('docker-compose.yml publishes PostgreSQL and Redis on loopback only', () => {
  const compose = readFileSync(join(__dirname, '..', '..', '..', 'docker-compose.yml'), 'utf8');
  const published = (service: string) => {
    const block = compose.split(/\n  (?=\S)/).find((b) => b.startsWith(`${service}:`)) ?? '';
    return JSON.parse(/ports: (\[.*\])/.exec(block)?.[1] ?? '[]') as string[];
  };
  expect(published('postgres')).toEqual(['127.0.0.1:5432:5432']);
  expect(published('redis')).toEqual(['127.0.0.1:6379:6379']);
});
