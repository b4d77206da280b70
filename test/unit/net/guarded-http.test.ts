import { pbkdf2 } from 'node:crypto';
import { createSocket, Socket } from 'node:dgram';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { jsonRpcProvider } from '../../../src/modules/chains/chain-networks';
import { GuardedHttp } from '../../../src/platform/net/guarded-http';
import { guardedFetchRequest } from '../../../src/platform/net/guarded-rpc';
import { dnsResolve } from '../../../src/platform/net/dns-resolve';
import { OutboundGuard, Resolve } from '../../../src/platform/net/outbound-guard';

const CHAIN_ID = 31_337;
let server: Server;
let port: number;
const hits: string[] = [];

beforeAll(async () => {
  // A JSON-RPC node that misbehaves on request.
  server = createServer((req, res) => {
    hits.push(req.url!);
    req.resume();
    if (req.url === '/redirect') return void res.writeHead(302, { location: '/rpc' }).end();
    if (req.url?.startsWith('/v3/')) return void res.writeHead(401).end('invalid project id');
    if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end(), 2_000);
    if (req.url === '/huge') return void res.writeHead(200, { 'content-type': 'application/json' }).end(`{"jsonrpc":"2.0","id":1,"result":"0x${'0'.repeat(100_000)}"}`);
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: `0x${CHAIN_ID.toString(16)}` })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => void (hits.length = 0));

const connector = (guard: OutboundGuard, timeoutMs = 2_000) => new GuardedHttp(guard, { timeoutMs, maxResponseBytes: 10_000, keepAliveMs: 100 });

async function chainIdThrough(http: GuardedHttp, url: string): Promise<number> {
  const provider = jsonRpcProvider(guardedFetchRequest(http, url), CHAIN_ID);
  try {
    return Number(await provider.send('eth_chainId', []));
  } finally {
    provider.destroy();
  }
}

test('a recovery RPC URL is read through the connector', async () => {
  expect(await chainIdThrough(connector(new OutboundGuard(true)), `http://127.0.0.1:${port}/rpc`)).toBe(CHAIN_ID);
  expect(hits).toEqual(['/rpc']);
});

test("a node refusing the caller's URL (HTTP 401): the error names its origin only, never the path or query holding the key", async () => {
  const error = (await chainIdThrough(connector(new OutboundGuard(true)), `http://127.0.0.1:${port}/v3/SECRET-KEY?apikey=SECRET-QUERY`).catch((e: unknown) => e)) as Error & { info?: unknown };
  expect(error).toMatchObject({ code: 'SERVER_ERROR', info: expect.objectContaining({ requestUrl: `http://127.0.0.1:${port}` }) });
  expect(`${error.message} ${JSON.stringify(error.info)}`).not.toMatch(/SECRET/);
  expect(hits).toEqual(['/v3/SECRET-KEY?apikey=SECRET-QUERY']);
});

test('a name that resolved to a public address when checked, and to loopback at connect time, is refused at connect', async () => {
  const answers = ['93.184.216.34', '127.0.0.1'];
  const rebinding: Resolve = async () => [{ address: answers.shift() ?? '127.0.0.1', family: 4 }];
  const guard = new OutboundGuard(false, rebinding);
  expect(await guard.refuseUrl('https://rpc.example/')).toBeNull();
  await expect(chainIdThrough(connector(guard), `https://rpc.example:${port}/rpc`)).rejects.toThrow('rpc.example resolves to 127.0.0.1, which is not a public address');
  expect(hits).toEqual([]);
});

test('an address written as a private IP is refused at connect, where no lookup runs', async () => {
  await expect(chainIdThrough(connector(new OutboundGuard(false)), `http://127.0.0.1:${port}/rpc`)).rejects.toThrow('127.0.0.1 is not a public address');
  expect(hits).toEqual([]);
});

test('a redirect is not followed', async () => {
  await expect(chainIdThrough(connector(new OutboundGuard(true)), `http://127.0.0.1:${port}/redirect`)).rejects.toThrow('redirects are not followed');
  expect(hits).toEqual(['/redirect']);
});

test('a node slower than the time limit fails once, within the limit', async () => {
  const started = Date.now();
  await expect(chainIdThrough(connector(new OutboundGuard(true), 200), `http://127.0.0.1:${port}/slow`)).rejects.toThrow('no answer within 200 ms');
  expect(Date.now() - started).toBeLessThan(1_000);
  expect(hits).toEqual(['/slow']);
});

test('an answer over the size limit is dropped, not read whole', async () => {
  await expect(chainIdThrough(connector(new OutboundGuard(true)), `http://127.0.0.1:${port}/huge`)).rejects.toThrow('more than the size limit');
});

describe('names are resolved by c-ares, off the threadpool, with a time limit', () => {
  // A DNS server on loopback: fast.test is 127.0.0.1 (TTL 60, or 0 for once.test), and a name starting
  // with slow is never answered.
  let dnsServer: Socket;
  let servers: string[];
  const asked: string[] = [];
  beforeAll(async () => {
    dnsServer = createSocket('udp4');
    dnsServer.on('message', (query, from) => {
      const { name, type } = question(query);
      asked.push(`${name} ${type === 1 ? 'A' : type === 28 ? 'AAAA' : type}`);
      if (name.startsWith('slow')) return;
      dnsServer.send(answer(query, type === 1 ? [127, 0, 0, 1] : null, name === 'once.test' ? 0 : 60), from.port, from.address);
    });
    await new Promise<void>((resolve) => dnsServer.bind(0, '127.0.0.1', resolve));
    servers = [`127.0.0.1:${dnsServer.address().port}`];
  });
  afterAll(() => new Promise<void>((resolve) => dnsServer.close(resolve)));
  beforeEach(() => void (asked.length = 0));

  // Waits 200 ms, then 400 ms for the retry (c-ares rounds up: under a second here), however busy the threadpool is.
  const resolver = (hostsFile?: string) => dnsResolve({ servers, timeoutMs: 200, hostsFile });
  const THREADPOOL = Number(process.env.UV_THREADPOOL_SIZE ?? 4);

  test('names whose DNS never answers fail their own requests as DNS timeouts, well within the request limit, and a request to another name meanwhile is not delayed', async () => {
    const http = connector(new OutboundGuard(true, resolver()), 5_000);
    const started = Date.now();
    const slow = Array.from({ length: 8 }, (_, i) =>
      http.request(`http://slow${i}.test:${port}/rpc`, { method: 'POST' }).then(
        () => 'answered',
        (e: Error) => ({ error: e.message, ms: Date.now() - started }),
      ),
    );
    const fast = await http.request(`http://fast.test:${port}/rpc`, { method: 'POST' });
    const fastMs = Date.now() - started;
    expect(fast.statusCode).toBe(200);
    const failed = (await Promise.all(slow)) as { error: string; ms: number }[];
    expect(failed.map((f) => f.error)).toEqual(Array.from({ length: 8 }, (_, i) => `ETIMEOUT: DNS lookup of slow${i}.test timed out`));
    expect(Math.max(...failed.map((f) => f.ms))).toBeLessThan(2_500);
    expect(fastMs).toBeLessThan(Math.min(...failed.map((f) => f.ms)));
    expect(hits).toEqual(['/rpc']);
    await http.close();
  });

  test('while eight lookups hang, pbkdf2 (the threadpool) runs at once', async () => {
    const resolve = resolver();
    let settled = 0;
    const hanging = Array.from({ length: 8 }, (_, i) => resolve(`slow${i}.test`).then(() => 'answered', (e: Error) => e.message).finally(() => settled++));
    await new Promise((r) => setTimeout(r, 20)); // the queries are out
    await Promise.all(Array.from({ length: 8 }, () => promisify(pbkdf2)('secret', 'salt', 1_000, 32, 'sha256')));
    expect(settled).toBe(0);
    expect(await Promise.all(hanging)).toEqual(Array.from({ length: 8 }, (_, i) => `DNS lookup of slow${i}.test timed out`));
  });

  test('a lookup does not wait for a busy threadpool', async () => {
    const guard = new OutboundGuard(false); // the resolver every guard has by default
    const busy = Array.from({ length: THREADPOOL }, () => promisify(pbkdf2)('secret', 'salt', 400_000, 32, 'sha256'));
    let oneDone = false;
    void Promise.race(busy).then(() => (oneDone = true));
    expect(await guard.refuseUrl('https://localhost/')).toBe('localhost resolves to 127.0.0.1, which is not a public address');
    expect(oneDone).toBe(false);
    await Promise.all(busy);
  });

  test('a burst of lookups of one name asks DNS once, and an answer with TTL 0 is not kept', async () => {
    const resolve = resolver();
    const answers = await Promise.all(Array.from({ length: 20 }, () => resolve('fast.test')));
    await resolve('fast.test');
    expect(answers[0]).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(asked.filter((q) => q.startsWith('fast.test'))).toEqual(['fast.test A', 'fast.test AAAA']);
    await resolve('once.test');
    await resolve('once.test');
    expect(asked.filter((q) => q === 'once.test A')).toHaveLength(2);
  });

  test('a cached answer is checked again at each connection: a private address stays refused', async () => {
    const guard = new OutboundGuard(false, resolver());
    expect(await guard.refuseUrl('https://fast.test/')).toBe('fast.test resolves to 127.0.0.1, which is not a public address');
    await expect(chainIdThrough(connector(guard), `https://fast.test:${port}/rpc`)).rejects.toThrow('fast.test resolves to 127.0.0.1, which is not a public address');
    expect(asked.filter((q) => q === 'fast.test A')).toHaveLength(1);
    expect(hits).toEqual([]);
  });

  test('a name in the hosts file is answered from it, as getaddrinfo does, without asking DNS; localhost stays loopback', async () => {
    const hostsFile = join(mkdtempSync(join(tmpdir(), 'keel-hosts-')), 'hosts');
    writeFileSync(hostsFile, '127.0.0.1 localhost\n93.184.216.34 Webhooks.Example # a comment\n::1 localhost\n');
    const resolve = resolver(hostsFile);
    expect(await resolve('webhooks.example')).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(await resolve('localhost')).toEqual([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
    expect(asked).toEqual([]);
    expect(await new OutboundGuard(false, resolve).refuseUrl('https://localhost/')).toBe('localhost resolves to 127.0.0.1, which is not a public address');
  });
});

/** The name and type of a DNS query's question. */
function question(query: Buffer): { name: string; type: number } {
  const labels: string[] = [];
  let at = 12;
  while (query[at]) {
    labels.push(query.subarray(at + 1, at + 1 + query[at]).toString('ascii'));
    at += query[at] + 1;
  }
  return { name: labels.join('.').toLowerCase(), type: query.readUInt16BE(at + 1) };
}

/** The answer to a query: one A record, or none (the name has no record of that type). */
function answer(query: Buffer, ipv4: number[] | null, ttl: number): Buffer {
  const end = 12 + question(query).name.length + 2 + 4; // header, the question's labels and root, type and class
  const header = Buffer.from(query.subarray(0, 12));
  header.writeUInt16BE(0x8180, 2); // a response, recursion available, no error
  header.writeUInt16BE(ipv4 ? 1 : 0, 6);
  header.writeUInt32BE(0, 8);
  if (!ipv4) return Buffer.concat([header, query.subarray(12, end)]);
  const record = Buffer.alloc(16);
  record.writeUInt16BE(0xc00c, 0); // the question's name
  record.writeUInt16BE(1, 2);
  record.writeUInt16BE(1, 4);
  record.writeUInt32BE(ttl, 6);
  record.writeUInt16BE(4, 10);
  Buffer.from(ipv4).copy(record, 12);
  return Buffer.concat([header, query.subarray(12, end), record]);
}
