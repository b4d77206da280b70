import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Where `npm run build` writes a page bundle (dist/<name>), from src/server or dist/src/server. */
function candidateDirs(name: string): string[] {
  return [resolve(__dirname, '../../dist', name), resolve(__dirname, '../../../dist', name)];
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.ttf': 'font/ttf',
  '.woff2': 'font/woff2',
};

/** A file as served: its bytes, gzipped once, and the ETag both share (the content's hash). */
export interface ServedFile {
  plain: Buffer;
  gzip: Buffer;
  etag: string;
  type: string;
}

export function servedFile(plain: Buffer, type: string): ServedFile {
  return { plain, gzip: gzipSync(plain, { level: 9 }), etag: `"${createHash('sha256').update(plain).digest('base64url').slice(0, 27)}"`, type };
}

/** A built page: its index.html as text and every other file of its folder (scripts, stylesheets, workers, fonts) ready to serve. */
export interface PageBundle {
  index: string;
  files: Map<string, ServedFile>;
}

/**
 * A page bundle read and compressed once, at its first request: the API pages' scripts take seconds
 * of CPU to gzip, which a host that never serves them (most processes, every test) must not pay
 * at start-up.
 */
export class StaticBundle {
  private loaded?: PageBundle;

  constructor(private readonly name: string) {}

  get(): PageBundle | undefined {
    if (this.loaded) return this.loaded;
    const dir = candidateDirs(this.name).find((d) => existsSync(join(d, 'index.html')));
    if (!dir) return undefined;
    const files = new Map<string, ServedFile>();
    for (const file of readdirSync(dir)) {
      const type = TYPES[extname(file)];
      if (type) files.set(file, servedFile(readFileSync(join(dir, file)), type));
    }
    this.loaded = { index: readFileSync(join(dir, 'index.html'), 'utf8'), files };
    return this.loaded;
  }
}

/** The file, gzipped when the client takes it, or 304 when the client's copy is current. */
export function sendFile(request: FastifyRequest, reply: FastifyReply, file: ServedFile): FastifyReply {
  const vary = reply.getHeader('Vary');
  reply.type(file.type).header('Vary', vary ? `${String(vary)}, Accept-Encoding` : 'Accept-Encoding').header('ETag', `W/${file.etag}`); // weak: the plain and gzipped bodies are the same file, not the same bytes
  const known = String(request.headers['if-none-match'] ?? '').split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (known.includes(file.etag)) return reply.code(304).send();
  if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('Content-Encoding', 'gzip').send(file.gzip);
  return reply.send(file.plain);
}

/** A Host header fit to repeat in a policy (name or address, optional port). */
const SAFE_HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export interface PagePolicyOptions {
  /** The Host header the page was served under: its ws:/wss: origins are allowed to connect. */
  host?: string;
  /**
   * For libraries that style from script: admits `<style>` elements carrying this nonce (made per
   * response) and inline style attributes (Monaco positions its lines in markup it writes as HTML;
   * Vue writes some static markup that way). Scripts stay 'self' only.
   */
  styleNonce?: string;
  /** Web workers from this host (Monaco's language services). */
  workers?: boolean;
  /** Fonts from this host and data: URLs (icon fonts inside a bundled stylesheet). */
  fonts?: boolean;
}

/**
 * A strict policy: the page runs only its own bundled scripts and talks only to the host that
 * served it (HTTP and graphql-ws); no inline script, nothing from elsewhere, no framing.
 */
export function pageContentSecurityPolicy(options: PagePolicyOptions = {}): string {
  // 'self' covers ws: and wss: of the same host in CSP 3; the explicit origins serve older browsers.
  const sockets = options.host && SAFE_HOST.test(options.host) ? ` ws://${options.host} wss://${options.host}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    ...(options.styleNonce ? [`style-src 'self' 'nonce-${options.styleNonce}'`, "style-src-attr 'unsafe-inline'"] : ["style-src 'self'"]),
    "img-src 'self' data:",
    ...(options.fonts ? ["font-src 'self' data:"] : []),
    ...(options.workers ? ["worker-src 'self'"] : []),
    `connect-src 'self'${sockets}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The security headers every built page and its files carry. */
export function securePage(reply: FastifyReply, policy: string): FastifyReply {
  return reply
    .header('Content-Security-Policy', policy)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('Cross-Origin-Opener-Policy', 'same-origin')
    .header('Cache-Control', 'no-cache');
}

/** A fresh nonce for one response's policy. */
export function newNonce(): string {
  return randomBytes(18).toString('base64url');
}
