import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Host } from '../platform/auth/permissions';
import { newNonce, pageContentSecurityPolicy, PagePolicyOptions, securePage, sendFile, StaticBundle } from './static-bundle';

/**
 * The API reference at /docs (Scalar, rendering this host's /v1/openapi.json) and the GraphQL
 * explorer (GraphiQL) for browsers at GET /graphql: pages built by esbuild from npm packages
 * (scripts/build-api-pages.js), served without credentials (the caller pastes a key into the page,
 * which sends it only to this host), under a strict policy: scripts from this host only, nothing
 * fetched elsewhere. Both libraries write their themes into `<style>` elements at run time; the page
 * gives each such element the response's nonce (api-pages/strict-csp.js), so no style element is
 * admitted without it (inline style attributes are: see pageContentSecurityPolicy).
 */
const EXPLORER_FILES = '/graphql/explorer/';

/** The pages' own paths: open without credentials, like the console. GET /graphql itself is the explorer only for {@link isExplorerPageRequest}. */
export function isApiPagePath(path: string): boolean {
  return path === '/docs' || path.startsWith('/docs/') || path.startsWith(EXPLORER_FILES);
}

/**
 * A browser opening /graphql: a GET that accepts HTML and carries no operation (neither `query` nor
 * a persisted query's `extensions`). A GraphQL client's GET always carries one, so it is never taken
 * for the page.
 */
export function isExplorerPageRequest(request: FastifyRequest): boolean {
  if (request.method !== 'GET' || !/\btext\/html\b/.test(String(request.headers.accept ?? ''))) return false;
  const params = request.query as Record<string, unknown> | undefined;
  return params?.query === undefined && params?.extensions === undefined;
}

interface PageOptions {
  bundle: StaticBundle;
  /** How the page reads in a 503 when it is not built. */
  title: string;
  policy: Omit<PagePolicyOptions, 'host' | 'styleNonce'>;
}

function pagePolicy(reply: FastifyReply, options: PageOptions, styleNonce?: string): string {
  return pageContentSecurityPolicy({ ...options.policy, host: reply.request.headers.host, styleNonce });
}

/** index.html with this response's nonce and the host's name: never cached, since the nonce is new each time. */
function sendPage(reply: FastifyReply, options: PageOptions, host: Host): FastifyReply {
  const built = options.bundle.get();
  if (!built) return securePage(reply, pagePolicy(reply, options)).code(503).type('text/plain; charset=utf-8').send(`${options.title} is not built: run \`npm run build\`.\n`);
  const nonce = newNonce();
  const html = built.index.replaceAll('__CSP_NONCE__', nonce).replaceAll('__KEEL_HOST__', host);
  return securePage(reply, pagePolicy(reply, options, nonce)).header('Cache-Control', 'no-store').type('text/html; charset=utf-8').send(html);
}

function registerFiles(app: FastifyInstance, prefix: string, options: PageOptions): void {
  app.get(`${prefix}:file`, async (request, reply) => {
    const file = options.bundle.get()?.files.get((request.params as { file: string }).file);
    securePage(reply, pagePolicy(reply, options));
    if (!file) return reply.code(404).type('text/plain; charset=utf-8').send('No such file\n');
    return sendFile(request, reply, file);
  });
}

/** /docs: the interactive reference of this host's REST API. */
export function registerApiReference(app: FastifyInstance, host: Host): void {
  const options: PageOptions = { bundle: new StaticBundle('docs'), title: 'The API reference', policy: {} };
  const page = async (_request: FastifyRequest, reply: FastifyReply) => sendPage(reply, options, host);
  app.get('/docs', page);
  app.get('/docs/', page);
  registerFiles(app, '/docs/', options);
}

/** The explorer's files under /graphql/explorer/; returns what answers a browser's GET /graphql (see {@link isExplorerPageRequest}). */
export function registerGraphqlExplorer(app: FastifyInstance, host: Host): (request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  const options: PageOptions = { bundle: new StaticBundle('graphql-explorer'), title: 'The GraphQL explorer', policy: { workers: true, fonts: true } };
  registerFiles(app, EXPLORER_FILES, options);
  return (_request, reply) => sendPage(reply, options, host);
}
