import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Host } from '../platform/auth/permissions';

/** Where `npm run build` (scripts/build-console.js) writes the console, from src/server or dist/src/server. */
const CANDIDATE_DIRS = [resolve(__dirname, '../../dist/console'), resolve(__dirname, '../../../dist/console')];

/** The console's paths: served without credentials (the page signs in itself, over the API). */
export function isConsolePath(path: string): boolean {
  return path === '/console' || path.startsWith('/console/');
}

/**
 * A strict policy: the page runs only its own bundled script and stylesheet and talks only to the
 * host that served it (HTTP and graphql-ws); nothing inline, nothing from elsewhere, no framing.
 */
export function consoleContentSecurityPolicy(host?: string): string {
  // 'self' covers ws: and wss: of the same host in CSP 3; the explicit origins serve older browsers.
  const sockets = host && SAFE_HOST.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self'${sockets}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** A Host header fit to repeat in the policy (name or address, optional port). */
const SAFE_HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

const FILES: Record<string, string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

interface Bundle {
  index: string;
  /** Each file as built and gzipped once (the script is mostly uPlot and preact: about a third of its size on the wire). */
  files: Map<string, { plain: Buffer; gzip: Buffer }>;
}

/** Reads the built bundle once it exists (a build made after the host started is picked up). */
class ConsoleBundle {
  private loaded?: Bundle;

  get(): Bundle | undefined {
    if (this.loaded) return this.loaded;
    const dir = CANDIDATE_DIRS.find((d) => existsSync(join(d, 'index.html')) && existsSync(join(d, 'app.js')));
    if (!dir) return undefined;
    const files = new Map<string, { plain: Buffer; gzip: Buffer }>();
    for (const name of Object.keys(FILES)) {
      const plain = readFileSync(join(dir, name));
      files.set(name, { plain, gzip: gzipSync(plain, { level: 9 }) });
    }
    this.loaded = { index: readFileSync(join(dir, 'index.html'), 'utf8'), files };
    return this.loaded;
  }
}

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', consoleContentSecurityPolicy(reply.request.headers.host))
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('Cross-Origin-Opener-Policy', 'same-origin')
    .header('Cache-Control', 'no-cache');
}

/**
 * The built-in console at /console: one static page (index.html, app.js, app.css built by esbuild),
 * the same bundle on both hosts; the page reads which host served it from a meta tag and shows that
 * host's pages (core: organisation, keys, wallets, deposits, approvals, webhooks; pro: the order book).
 */
export function registerConsoleRoute(app: FastifyInstance, host: Host): void {
  const bundle = new ConsoleBundle();
  const page = async (_request: unknown, reply: FastifyReply) => {
    const b = bundle.get();
    if (!b) return secure(reply).code(503).type('text/plain; charset=utf-8').send('The console is not built: run `npm run build`.\n');
    return secure(reply).type('text/html; charset=utf-8').send(b.index.replace('__KEEL_HOST__', host));
  };
  app.get('/console', page);
  app.get('/console/', page);
  for (const [name, type] of Object.entries(FILES)) {
    app.get(`/console/${name}`, async (request, reply) => {
      const b = bundle.get();
      if (!b) return secure(reply).code(404).type('text/plain; charset=utf-8').send('The console is not built\n');
      const file = b.files.get(name)!;
      const vary = reply.getHeader('Vary');
      secure(reply).type(type).header('Vary', vary ? `${String(vary)}, Accept-Encoding` : 'Accept-Encoding');
      if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('Content-Encoding', 'gzip').send(file.gzip);
      return reply.send(file.plain);
    });
  }
}
