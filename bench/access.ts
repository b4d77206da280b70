import { createHash } from 'node:crypto';
import { onboardOrganization } from '../src/modules/api-keys/onboarding';
import { cpuPerCall, startBenchKeel } from './in-process';

const QUERY = '{ organization { id name tier } }';

interface Variant {
  name: string;
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  payload?: unknown;
}

/**
 * What browser access costs per request: CPU time inside one Keel process (Fastify's inject, no
 * sockets), 20 requests in flight, the variants run alternately within each run so a busy machine
 * weighs on all alike. The same authenticated read by API key and by access token (`Authorization:
 * Bearer`), and the same GraphQL query as its document over POST and as a persisted query's hash
 * over GET. CPU includes V8's garbage-collector threads; every request spends its rate limit in Redis.
 * `npm run bench -- access [requestsPerRun=3000] [runs=3]`.
 */
export async function run(args: string[]): Promise<object> {
  const requests = Number(args[0] ?? 3000);
  const runs = Number(args[1] ?? 3);
  const { keel } = await startBenchKeel('access', { KEEL_ROLES: 'api' });
  try {
    const org = await onboardOrganization(keel.platform.db, keel.services, { name: 'bench', tier: 'Business', proAccess: false });
    const app = keel.core!.app;
    const key = { apikey: org.adminKey, orgid: org.orgId };
    const minted = await app.inject({ method: 'POST', url: '/v1/tokens', headers: key, payload: { scopes: ['read'], ttlSeconds: 3600 } });
    const token = minted.json().data.token as string;
    const extensions = { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(QUERY).digest('hex') } };
    // Registered once, as a client's first miss would.
    await app.inject({ method: 'POST', url: '/graphql', headers: key, payload: { query: QUERY, extensions } });

    const variants: Variant[] = [
      { name: 'restByApiKey', method: 'GET', url: '/v1/organization', headers: key },
      { name: 'restByBearerToken', method: 'GET', url: '/v1/organization', headers: { authorization: `Bearer ${token}` } },
      { name: 'graphqlDocumentOverPost', method: 'POST', url: '/graphql', headers: key, payload: { query: QUERY } },
      { name: 'persistedQueryOverGet', method: 'GET', url: `/graphql?${new URLSearchParams({ extensions: JSON.stringify(extensions) })}`, headers: key },
    ];
    for (const v of variants) {
      const res = await app.inject({ method: v.method, url: v.url, headers: v.headers, payload: v.payload as object });
      if (res.statusCode !== 200 || res.body.includes('"errors"')) throw new Error(`${v.name}: ${res.statusCode} ${res.body}`);
    }
    const costs = await cpuPerCall(
      Object.fromEntries(
        variants.map((v) => [
          v.name,
          async () => {
            const res = await app.inject({ method: v.method, url: v.url, headers: v.headers, payload: v.payload as object });
            if (res.statusCode !== 200) throw new Error(`${v.name}: ${res.statusCode}`);
          },
        ]),
      ),
      { perRun: requests, runs, inFlight: 20 },
    );
    return {
      benchmark: 'access',
      requestsPerRun: requests,
      inFlight: 20,
      cpuMicrosPerRequest: Object.fromEntries(Object.entries(costs).map(([name, c]) => [name, { median: c.cpuMicros, runs: c.runs }])),
    };
  } finally {
    await keel.stop();
  }
}
