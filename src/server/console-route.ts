import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Host } from '../platform/auth/permissions';
import { pageContentSecurityPolicy, securePage, sendFile, servedFile, ServedFile, StaticBundle } from './static-bundle';

/** The console's paths: served without credentials (the page signs in itself, over the API). */
export function isConsolePath(path: string): boolean {
  return path === '/console' || path.startsWith('/console/');
}

/**
 * A strict policy: the page runs only its own bundled script and stylesheet and talks only to the
 * host that served it (HTTP and graphql-ws); nothing inline, nothing from elsewhere, no framing.
 */
export function consoleContentSecurityPolicy(host?: string): string {
  return pageContentSecurityPolicy({ host });
}

const FILES = ['app.js', 'app.css'];

function secure(reply: FastifyReply): FastifyReply {
  return securePage(reply, consoleContentSecurityPolicy(reply.request.headers.host));
}

/**
 * The built-in console at /console: one static page (index.html, app.js, app.css built by esbuild),
 * the same bundle on both hosts; the page reads which host served it from a meta tag and shows that
 * host's pages (core: organisation, keys, wallets, deposits, approvals, webhooks; pro: the order book).
 * The script is mostly uPlot and preact: about a third of its size on the wire gzipped.
 */
export function registerConsoleRoute(app: FastifyInstance, host: Host): void {
  const bundle = new StaticBundle('console');
  let index: ServedFile | undefined;
  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const b = bundle.get();
    if (!b) return secure(reply).code(503).type('text/plain; charset=utf-8').send('The console is not built: run `npm run build`.\n');
    index ??= servedFile(Buffer.from(b.index.replace('__KEEL_HOST__', host)), 'text/html; charset=utf-8');
    return sendFile(request, secure(reply), index);
  };
  app.get('/console', page);
  app.get('/console/', page);
  for (const name of FILES) {
    app.get(`/console/${name}`, async (request, reply) => {
      const file = bundle.get()?.files.get(name);
      if (!file) return secure(reply).code(404).type('text/plain; charset=utf-8').send('The console is not built\n');
      return sendFile(request, secure(reply), file);
    });
  }
}
