import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jsonRpcProvider } from '../../../src/modules/chains/chain-networks';
import { GuardedHttp } from '../../../src/platform/net/guarded-http';
import { guardedFetchRequest } from '../../../src/platform/net/guarded-rpc';
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
