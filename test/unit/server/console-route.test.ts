import { execFileSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { registerConsoleRoute } from '../../../src/server/console-route';

/** A GET with raw bytes back (no client-side decompression). */
function get(port: number, url: string, headers: Record<string, string> = {}): Promise<{ statusCode: number; headers: Record<string, string | string[] | undefined>; rawPayload: Buffer; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: url, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const rawPayload = Buffer.concat(chunks);
        resolve({ statusCode: res.statusCode!, headers: res.headers, rawPayload, body: rawPayload.toString('utf8') });
      });
    })
      .on('error', reject)
      .end();
  });
}

/** The console's files are compressed once and served with an ETag: a current copy is answered 304. */
describe('console route', () => {
  const root = path.resolve(__dirname, '../../..');
  beforeAll(() => {
    execFileSync(process.execPath, [path.join(root, 'scripts/build-console.js')], { cwd: root, stdio: 'ignore' });
  });

  test('serves the built script gzipped or plain, with one weak ETag for both, and 304 for a client that has it', async () => {
    const app = Fastify();
    registerConsoleRoute(app, 'core');
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as AddressInfo).port;
    const inject = (o: { method: string; url: string; headers?: Record<string, string> }) => get(port, o.url, o.headers);
    const built = readFileSync(path.join(root, 'dist/console/app.js'));
    const gz = await inject({ method: 'GET', url: '/console/app.js', headers: { 'accept-encoding': 'gzip, br' } });
    expect(gz.statusCode).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).equals(built)).toBe(true);
    const plain = await inject({ method: 'GET', url: '/console/app.js' });
    expect(plain.rawPayload.equals(built)).toBe(true);
    expect(plain.headers.etag).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    expect(gz.headers.etag).toBe(plain.headers.etag);
    expect(plain.headers.vary).toMatch(/Accept-Encoding/);

    const again = await inject({ method: 'GET', url: '/console/app.js', headers: { 'if-none-match': String(plain.headers.etag), 'accept-encoding': 'gzip' } });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    const stale = await inject({ method: 'GET', url: '/console/app.js', headers: { 'if-none-match': '"stale"' } });
    expect(stale.statusCode).toBe(200);

    const page = await inject({ method: 'GET', url: '/console' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('core');
    expect(page.body).not.toContain('__KEEL_HOST__');
    expect((await inject({ method: 'GET', url: '/console', headers: { 'if-none-match': String(page.headers.etag) } })).statusCode).toBe(304);
    await app.close();
  });
});
