import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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

/** A file as served: its bytes, gzipped once, and the ETag both share (the content's hash). */
interface ServedFile {
  plain: Buffer;
  gzip: Buffer;
  etag: string;
}

interface Bundle {
  /** index.html with this host's name in it. */
  index: ServedFile;
  /** The script and stylesheet (the script is mostly uPlot and preact: about a third of its size on the wire gzipped). */
  files: Map<string, ServedFile>;
}

function served(plain: Buffer): ServedFile {
  return { plain, gzip: gzipSync(plain, { level: 9 }), etag: `"${createHash('sha256').update(plain).digest('base64url').slice(0, 27)}"` };
}

/**
 * The built bundle, read and compressed once: at registration when it is built already (start-up,
 * off the request path), else at the first request after a build made once the host was up.
 */
class ConsoleBundle {
  private loaded?: Bundle;

  constructor(private readonly host: Host) {
    this.get();
  }

  get(): Bundle | undefined {
    if (this.loaded) return this.loaded;
    const dir = CANDIDATE_DIRS.find((d) => existsSync(join(d, 'index.html')) && existsSync(join(d, 'app.js')));
    if (!dir) return undefined;
    const files = new Map(Object.keys(FILES).map((name) => [name, served(readFileSync(join(dir, name)))]));
    this.loaded = { index: served(Buffer.from(readFileSync(join(dir, 'index.html'), 'utf8').replace('__KEEL_HOST__', this.host))), files };
    return this.loaded;
  }
}

/** The file, gzipped when the client takes it, or 304 when the client's copy is current. */
function send(request: FastifyRequest, reply: FastifyReply, file: ServedFile, type: string): FastifyReply {
  const vary = reply.getHeader('Vary');
  secure(reply).type(type).header('Vary', vary ? `${String(vary)}, Accept-Encoding` : 'Accept-Encoding').header('ETag', `W/${file.etag}`); // weak: the plain and gzipped bodies are the same file, not the same bytes
  const known = String(request.headers['if-none-match'] ?? '').split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (known.includes(file.etag)) return reply.code(304).send();
  if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('Content-Encoding', 'gzip').send(file.gzip);
  return reply.send(file.plain);
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
  const bundle = new ConsoleBundle(host);
  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const b = bundle.get();
    if (!b) return secure(reply).code(503).type('text/plain; charset=utf-8').send('The console is not built: run `npm run build`.\n');
    return send(request, reply, b.index, 'text/html; charset=utf-8');
  };
  app.get('/console', page);
  app.get('/console/', page);
  for (const [name, type] of Object.entries(FILES)) {
    app.get(`/console/${name}`, async (request, reply) => {
      const b = bundle.get();
      if (!b) return secure(reply).code(404).type('text/plain; charset=utf-8').send('The console is not built\n');
      return send(request, reply, b.files.get(name)!, type);
    });
  }
}
