import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Fastify, { FastifyInstance, FastifyRequest } from 'fastify';
import { isApiPagePath, isExplorerPageRequest, registerApiReference, registerGraphqlExplorer } from '../../../src/server/api-pages';

/** The pages' HTML carries a nonce made per response, and the policy admits styles only with it. */
describe('the API pages', () => {
  let app: FastifyInstance;
  let base: string;
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { headers });
  beforeAll(async () => {
    // Built by `npm run build`; the browser test rebuilds it (test/browser/api-pages.test.ts).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    if (!['docs', 'graphql-explorer'].every((page) => existsSync(join(__dirname, '../../../dist', page, 'index.html')))) await (require('../../../scripts/build-api-pages.js') as { buildApiPages: () => Promise<unknown> }).buildApiPages();
    app = Fastify();
    registerApiReference(app, 'core');
    const explorer = registerGraphqlExplorer(app, 'core');
    app.get('/graphql', (request, reply) => explorer(request, reply));
    await app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  }, 120_000);
  afterAll(() => app.close());

  const nonceOf = (html: string) => /<meta name="csp-nonce" content="([^"]+)">/.exec(html)?.[1];

  test.each(['/docs', '/graphql'])('%s: a fresh style nonce per response, scripts from this host only, never cached', async (url) => {
    const [a, b] = await Promise.all([get(url), get(url)]);
    expect(a.status).toBe(200);
    const body = await a.text();
    const nonce = nonceOf(body)!;
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(nonceOf(await b.text())).not.toBe(nonce);
    const csp = String(a.headers.get('content-security-policy'));
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain(`style-src 'self' 'nonce-${nonce}';`);
    expect(csp).toContain(`connect-src 'self' ws://${new URL(base).host} wss://${new URL(base).host};`);
    // Inline style attributes only (Monaco and Vue write them as markup); no inline script, no eval, nothing from elsewhere.
    expect(csp).toContain("style-src-attr 'unsafe-inline';");
    expect(csp.replace("style-src-attr 'unsafe-inline';", '')).not.toMatch(/unsafe-|https?:/);
    expect(a.headers.get('cache-control')).toBe('no-store');
    expect(body).not.toMatch(/<script>|<style|https?:\/\//);
    expect(body).toContain('Keel core');
  });

  test('serves the built files gzipped under the same policy; an unknown file is 404', async () => {
    const script = await get('/docs/app.js', { 'accept-encoding': 'gzip' });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('content-encoding')).toBe('gzip');
    expect(script.headers.get('content-security-policy')).toContain("script-src 'self'");
    const worker = await get('/graphql/explorer/graphql.worker.js');
    expect(worker.status).toBe(200);
    expect(worker.headers.get('content-security-policy')).toContain("worker-src 'self'");
    expect((await get('/docs/index.html')).status).toBe(404);
    expect((await get('/docs/nothing.js')).status).toBe(404);
  });
});

describe('a browser opening /graphql', () => {
  const request = (method: string, accept: string | undefined, query: Record<string, string> = {}) => ({ method, headers: accept ? { accept } : {}, query }) as unknown as FastifyRequest;
  test('is a GET accepting HTML without an operation; a GraphQL request over GET never is', () => {
    expect(isExplorerPageRequest(request('GET', 'text/html,application/xhtml+xml,*/*;q=0.8'))).toBe(true);
    expect(isExplorerPageRequest(request('GET', 'application/json'))).toBe(false);
    expect(isExplorerPageRequest(request('GET', undefined))).toBe(false);
    expect(isExplorerPageRequest(request('POST', 'text/html'))).toBe(false);
    expect(isExplorerPageRequest(request('GET', 'text/html', { query: '{ organization { id } }' }))).toBe(false);
    expect(isExplorerPageRequest(request('GET', 'text/html', { extensions: '{"persistedQuery":{"version":1,"sha256Hash":"ab"}}' }))).toBe(false);
  });

  test('the pages\' own paths are open; the API is not', () => {
    for (const path of ['/docs', '/docs/', '/docs/app.js', '/graphql/explorer/app.js']) expect(isApiPagePath(path)).toBe(true);
    for (const path of ['/graphql', '/v1/webhooks', '/docsx', '/graphql/explorer']) expect(isApiPagePath(path)).toBe(false);
  });
});
