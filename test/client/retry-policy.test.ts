import { inspect } from 'node:util';
import { backoffMs, retryDelayFor, retryingFetch, RetryEvent } from '../../clients/typescript/src';

/** The retry policy's decisions, on answers built in memory (what the server says is all it reads). */
const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);
const fixed = { now: () => NOW, random: () => 0.5, jitterMs: 200 };
const answer = (status: number, code?: string, headers: Record<string, string> = {}, details?: Record<string, unknown>) =>
  new Response(code ? JSON.stringify({ error: { code, message: code, details, timestamp: new Date(NOW).toISOString(), requestId: 'r1' } }) : '', { status, headers });

describe('how long a refusal waits', () => {
  test('429 waits until X-RateLimit-Reset, plus jitter', async () => {
    expect(await retryDelayFor(answer(429, 'RATE_LIMIT_EXCEEDED', { 'X-RateLimit-Reset': String(NOW / 1000 + 3) }), 1, fixed)).toEqual({ delayMs: 3100, code: 'RATE_LIMIT_EXCEEDED' });
  });

  test('Retry-After wins over X-RateLimit-Reset, in seconds or as an HTTP date', async () => {
    const headers = { 'Retry-After': '2', 'X-RateLimit-Reset': String(NOW / 1000 + 30) };
    expect((await retryDelayFor(answer(429, 'RATE_LIMIT_EXCEEDED', headers), 1, fixed))?.delayMs).toBe(2100);
    expect((await retryDelayFor(answer(503, 'SERVICE_UNAVAILABLE', { 'Retry-After': new Date(NOW + 4000).toUTCString() }), 1, fixed))?.delayMs).toBe(4100);
  });

  test('409 NOT_LEADER and 409 CONFLICT of an Idempotency-Key in progress wait Retry-After; any other 409 is final', async () => {
    expect(await retryDelayFor(answer(409, 'NOT_LEADER', { 'Retry-After': '5' }), 1, fixed)).toEqual({ delayMs: 5100, code: 'NOT_LEADER' });
    const inProgress = answer(409, 'CONFLICT', { 'Retry-After': '1' }, { reason: 'IDEMPOTENCY_KEY_IN_PROGRESS' });
    expect(await retryDelayFor(inProgress, 1, fixed)).toEqual({ delayMs: 1100, code: 'CONFLICT' });
    // The CONFLICT of a resource's state is not transient.
    expect(await retryDelayFor(answer(409, 'CONFLICT'), 1, fixed)).toBeUndefined();
    expect(await retryDelayFor(answer(409, 'CONFLICT', {}, { reason: 'SOMETHING_ELSE' }), 1, fixed)).toBeUndefined();
    expect(await retryDelayFor(answer(409, 'DUPLICATE_ENTRY'), 1, fixed)).toBeUndefined();
    expect(await retryDelayFor(answer(409, 'POST_ONLY_WOULD_TAKE'), 1, fixed)).toBeUndefined();
  });

  test('a monthly quota (429 QUOTA_EXCEEDED), 4xx and 500 are final', async () => {
    for (const [status, code] of [[429, 'QUOTA_EXCEEDED'], [400, 'BAD_REQUEST'], [404, 'NOT_FOUND'], [422, 'VALIDATION_ERROR'], [500, 'INTERNAL_ERROR']] as const) {
      expect(await retryDelayFor(answer(status, code), 1, fixed)).toBeUndefined();
    }
  });

  test('503 without Retry-After backs off exponentially with full jitter, capped', () => {
    const options = { baseDelayMs: 100, maxDelayMs: 1000, random: () => 0.999 };
    expect([1, 2, 3, 4, 5, 6].map((n) => Math.round(backoffMs(n, options)))).toEqual([100, 200, 400, 799, 999, 999]);
    expect(backoffMs(3, { baseDelayMs: 100, random: () => 0 })).toBe(0);
  });
});

describe('which requests are sent again', () => {
  /** A fetch that answers from a list and records what it was asked. */
  const scripted = (answers: (() => Response)[]) => {
    const asked: Request[] = [];
    return { asked, fetch: async (r: Request) => (asked.push(r), (answers[asked.length - 1] ?? (() => new Response('{}', { status: 200 })))()) };
  };
  const noWait = { sleep: async () => undefined, random: () => 0 };

  test('a write without an Idempotency-Key is never retried', async () => {
    const server = scripted([() => answer(503, 'SERVICE_UNAVAILABLE')]);
    const res = await retryingFetch(noWait, server.fetch)(new Request('http://keel.test/v1/transfers/x/approve', { method: 'POST' }));
    expect(res.status).toBe(503);
    expect(server.asked).toHaveLength(1);
  });

  test('a write with one is retried with the same key and the same body', async () => {
    const server = scripted([() => answer(503, 'SERVICE_UNAVAILABLE'), () => answer(429, 'RATE_LIMIT_EXCEEDED')]);
    const res = await retryingFetch(noWait, server.fetch)(new Request('http://keel.test/v1/webhooks', { method: 'POST', headers: { 'Idempotency-Key': 'k-1' }, body: '{"a":1}' }));
    expect(res.status).toBe(200);
    expect(server.asked.map((r) => r.headers.get('idempotency-key'))).toEqual(['k-1', 'k-1', 'k-1']);
    expect(await Promise.all(server.asked.map((r) => r.text()))).toEqual(['{"a":1}', '{"a":1}', '{"a":1}']);
  });

  test('a wait longer than maxDelayMs is not made: the refusal is returned', async () => {
    const server = scripted([() => answer(429, 'RATE_LIMIT_EXCEEDED', { 'Retry-After': '120' })]);
    const res = await retryingFetch({ ...noWait, maxDelayMs: 60_000 }, server.fetch)(new Request('http://keel.test/v1/transfers'));
    expect(res.status).toBe(429);
    expect(server.asked).toHaveLength(1);
  });

  test('what onRetry is given names the request by method and URL and holds no credential: an event logged whole shows no API key, org id or token', async () => {
    const API_KEY = 'keel_sk_live_0123456789abcdef';
    const ORG_ID = 'org-5f3c1e2a-secret-org';
    const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJrZXkifQ.c2lnbmF0dXJl';
    const events: RetryEvent[] = [];
    let calls = 0;
    const flaky = async () => {
      if (calls++ % 2 === 0) return answer(503, 'SERVICE_UNAVAILABLE');
      return new Response('{}', { status: 200 });
    };
    const send = retryingFetch({ ...noWait, onRetry: (e) => events.push(e) }, flaky);
    await send(new Request('http://keel.test/v1/webhooks', { method: 'POST', headers: { apiKey: API_KEY, orgId: ORG_ID, 'Idempotency-Key': 'k-2' }, body: '{}' }));
    await send(new Request('http://keel.test/v1/transfers?limit=5', { headers: { Authorization: `Bearer ${TOKEN}` } }));
    // And a connection that failed before any answer.
    await retryingFetch({ ...noWait, retries: 1, onRetry: (e) => events.push(e) }, async () => {
      throw new TypeError('fetch failed');
    })(new Request('http://keel.test/v1/transfers', { headers: { Authorization: `Bearer ${TOKEN}` } })).catch(() => undefined);

    expect(events).toHaveLength(3);
    for (const event of events) {
      const logged = inspect(event, { depth: Infinity, showHidden: true, getters: true });
      expect(logged).not.toContain(API_KEY);
      expect(logged).not.toContain(ORG_ID);
      expect(logged).not.toContain(TOKEN);
      expect(JSON.stringify(event)).not.toMatch(/keel_sk_live|secret-org|eyJhbGci/);
    }
    expect(events.map(({ method, url, retry, status, code }) => ({ method, url, retry, status, code }))).toEqual([
      { method: 'POST', url: 'http://keel.test/v1/webhooks', retry: 1, status: 503, code: 'SERVICE_UNAVAILABLE' },
      { method: 'GET', url: 'http://keel.test/v1/transfers?limit=5', retry: 1, status: 503, code: 'SERVICE_UNAVAILABLE' },
      { method: 'GET', url: 'http://keel.test/v1/transfers', retry: 1, status: undefined, code: undefined },
    ]);
  });

  test('a connection that fails before any answer is retried for a read, then the error is thrown when retries run out', async () => {
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new TypeError('fetch failed');
    };
    await expect(retryingFetch({ ...noWait, retries: 2 }, failing)(new Request('http://keel.test/v1/transfers'))).rejects.toThrow('fetch failed');
    expect(calls).toBe(3);
  });
});
