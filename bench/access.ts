import { createHash } from 'node:crypto';
import { createBenchOrganization, freshDatabase, keelCli, LoadRun, loadRun, medianRun, startKeelProcess, stopProcess } from './support';

const QUERY = '{ organization { id name tier } }';

interface Variant {
  what: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * What browser access costs per request on the core host, at 50 connections, variants run
 * alternately so they share the machine's state: the same read authenticated by API key and by an
 * access token (`Authorization: Bearer`: an HMAC check plus the issuing key's cached liveness), and
 * the same GraphQL query sent as a document over POST and as a persisted query's hash over GET.
 * Every request is authenticated and rate-limited in Redis (RATE_LIMIT_SCALE raised).
 * `npm run bench -- access [secondsPerRun=5] [runs=3]`.
 */
export async function run(args: string[]): Promise<object> {
  const seconds = Number(args[0] ?? 5);
  const runs = Number(args[1] ?? 3);
  const port = 4910;
  const env = {
    DATABASE_URL: await freshDatabase('keel_bench_access'),
    REDIS_PREFIX: 'keelbench:access:',
    CORE_PORT: String(port),
    HOST: '127.0.0.1',
    KEEL_ROLES: 'api',
    DEV_CHAIN_PORT: '0',
    RATE_LIMIT_SCALE: '100000',
  };
  keelCli(['migrate'], env);
  const org = createBenchOrganization(env);
  const base = `http://127.0.0.1:${port}`;
  const keyHeaders = { apiKey: org.adminKey, orgId: org.orgId };
  const child = await startKeelProcess(env, `${base}/ready`);
  try {
    const minted = await fetch(`${base}/v1/tokens`, { method: 'POST', headers: { ...keyHeaders, 'content-type': 'application/json' }, body: JSON.stringify({ scopes: ['read'], ttlSeconds: 3600 }) });
    const { token } = ((await minted.json()) as { data: { token: string } }).data;
    const extensions = { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(QUERY).digest('hex') } };
    // Registers the document once, as a client's first miss would.
    await fetch(`${base}/graphql`, { method: 'POST', headers: { ...keyHeaders, 'content-type': 'application/json' }, body: JSON.stringify({ query: QUERY, extensions }) });

    const variants: Variant[] = [
      { what: 'GET /v1/organization, apiKey + orgId', method: 'GET', path: '/v1/organization', headers: keyHeaders },
      { what: 'GET /v1/organization, Authorization: Bearer <token>', method: 'GET', path: '/v1/organization', headers: { Authorization: `Bearer ${token}` } },
      { what: 'POST /graphql, the document', method: 'POST', path: '/graphql', headers: { ...keyHeaders, 'content-type': 'application/json' }, body: JSON.stringify({ query: QUERY }) },
      { what: "GET /graphql, the persisted query's hash", method: 'GET', path: `/graphql?${new URLSearchParams({ extensions: JSON.stringify(extensions) })}`, headers: keyHeaders },
    ];
    for (const v of variants) {
      const probe = await fetch(`${base}${v.path}`, { method: v.method, headers: v.headers, body: v.body });
      const text = await probe.text();
      if (probe.status !== 200 || text.includes('"errors"')) throw new Error(`${v.what}: ${probe.status} ${text}`);
    }
    const load = (v: Variant, duration: number) => loadRun({ url: `${base}${v.path}`, method: v.method, headers: v.headers, body: v.body, connections: 50, duration });
    for (const v of variants) await load(v, 2); // warm-up
    const results: LoadRun[][] = variants.map(() => []);
    for (let i = 0; i < runs; i++) for (const [j, v] of variants.entries()) results[j].push(await load(v, seconds));
    return {
      benchmark: 'access',
      connections: 50,
      secondsPerRun: seconds,
      variants: variants.map((v, j) => ({ what: v.what, runs: results[j], median: medianRun(results[j], 'requestsPerSecond') })),
    };
  } finally {
    await stopProcess(child);
  }
}
