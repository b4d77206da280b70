import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundGuard } from '../../../src/platform/net/outbound-guard';
import { WebhookSender } from '../../../src/modules/webhooks/webhook-sender';

let server: Server;
let base: string;
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url!);
    if (req.url === '/redirect') return void res.writeHead(302, { location: '/ok' }).end();
    if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end(), 1_000);
    if (req.url === '/chatty') return void res.writeHead(500).end('x'.repeat(100_000));
    if (req.url === '/nul') return void res.writeHead(500).end(Buffer.from('bad\0news \xff', 'latin1'));
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://localhost:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const sender = (allowPrivate: boolean, timeoutMs = 5_000) => new WebhookSender(new OutboundGuard(allowPrivate), timeoutMs);

test('at connect time, a name that resolves to a private address is refused, whatever it resolved to when saved', async () => {
  const result = await sender(false).send(`${base}/ok`, '{}', {});
  expect(result).toMatchObject({ ok: false, statusCode: null });
  expect(result.errorMessage).toContain('not a public address');
  expect(hits).not.toContain('/ok');
});

test('a 2xx is success', async () => {
  expect(await sender(true).send(`${base}/ok`, '{}', {})).toMatchObject({ ok: true, statusCode: 200, errorMessage: null });
});

test('redirects are not followed: the 3xx itself is the failed answer', async () => {
  hits.length = 0;
  const result = await sender(true).send(`${base}/redirect`, '{}', {});
  expect(result).toMatchObject({ ok: false, statusCode: 302 });
  expect(hits).toEqual(['/redirect']);
});

test('a receiver slower than the timeout fails with a clear message', async () => {
  const result = await sender(true, 200).send(`${base}/slow`, '{}', {});
  expect(result).toMatchObject({ ok: false, statusCode: null, errorMessage: 'no answer within 200 ms' });
});

test('only a small excerpt of the answer is read and kept', async () => {
  const result = await sender(true).send(`${base}/chatty`, '{}', {});
  expect(result.statusCode).toBe(500);
  expect(result.errorMessage!.length).toBeLessThan(1_100);
});

test('the kept answer is storable text: a NUL or a byte that is not UTF-8 becomes U+FFFD', async () => {
  const result = await sender(true).send(`${base}/nul`, '{}', {});
  expect(result).toMatchObject({ ok: false, statusCode: 500, errorMessage: 'receiver answered 500: bad\uFFFDnews \uFFFD' });
});
