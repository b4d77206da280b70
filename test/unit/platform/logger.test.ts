import { createLogger } from '../../../src/platform/logger';
import { keyRefusingNode } from '../../support/key-refusing-node';

const KEY = 'SECRETKEY0123456789';
const PASSWORD = 'hunter2pw';

/** A logger writing into `raw`; `line(i)` parses one (the last by default). */
function capture(level = 'debug') {
  const raw: string[] = [];
  const logger = createLogger(level, { write: (line: string) => void raw.push(line) });
  return { logger, raw, line: (i = raw.length - 1) => JSON.parse(raw[i]) };
}

describe('an error in a log line', () => {
  test("an ethers error from a node URL with a key and a password carries neither, but keeps its message, code and stack", async () => {
    const node = await keyRefusingNode(KEY);
    try {
      const error = await node.balanceReadError('keel', PASSWORD);
      // What ethers hangs on its error: the whole URL, the node's answer.
      expect(JSON.stringify(error)).toContain(KEY);
      const { logger, raw, line } = capture();
      logger.error({ err: error }, 'graphql resolver error');
      expect(raw[0]).not.toContain(KEY);
      expect(raw[0]).not.toContain(PASSWORD);
      expect(raw[0]).not.toContain(Buffer.from(`keel:${PASSWORD}`).toString('base64'));
      const { err } = line();
      expect(err).toMatchObject({ type: 'Error', code: 'SERVER_ERROR', message: 'server response 401 Unauthorized' });
      expect(err.stack).toMatch(/^Error: server response 401 Unauthorized\n\s+at /);
      expect(err).not.toHaveProperty('info');
      expect(err).not.toHaveProperty('request');
      expect(err).not.toHaveProperty('response');
    } finally {
      await node.close();
    }
  });

  test("a cause quoting a URL with credentials is written with the URL's origin only, the chain kept", async () => {
    const fetched = await fetch(`https://keel:${PASSWORD}@127.0.0.1:1/v2/${KEY}?apikey=${KEY}`).then(
      () => undefined,
      (e: unknown) => e,
    );
    const error = new Error('the price source could not be read', { cause: fetched });
    const { logger, raw, line } = capture();
    logger.warn({ err: error }, 'prices not refreshed');
    expect(raw[0]).not.toContain(KEY);
    expect(raw[0]).not.toContain(PASSWORD);
    const { err } = line();
    expect(err).toMatchObject({
      type: 'Error',
      message: 'the price source could not be read',
      cause: { type: 'TypeError', message: 'Request cannot be constructed from a URL that includes credentials: https://127.0.0.1:1' },
    });
    expect(err.stack).toMatch(/^Error: the price source could not be read\n\s+at /);
    // (undici's error has frames outside Jest; inside, none)
    expect(err.cause.stack).toMatch(/^TypeError: Request cannot be constructed .* https:\/\/127\.0\.0\.1:1(\n\s+at |$)/);
  });

  test('a chain of causes is written a few deep, a cycle once', () => {
    let error = new Error('outermost');
    for (let i = 0; i < 10; i++) error = new Error(`wrapper ${i}`, { cause: error });
    const looped = new Error('looped') as Error & { cause?: unknown };
    looped.cause = looped;
    const { logger, line } = capture();
    logger.error({ err: error }, 'deep');
    let depth = 0;
    for (let e = line().err; e.cause; e = e.cause) depth++;
    expect(depth).toBeLessThanOrEqual(4);
    logger.error({ err: looped }, 'loop');
    expect(line().err).toEqual(expect.objectContaining({ message: 'looped' }));
    expect(line().err.cause).toBeUndefined();
  });

  test('under `error` too, as a string (URLs cut to their origin), and logged alone (the line message safe as well)', () => {
    const { logger, line } = capture();
    logger.warn({ error: `broadcast to https://rpc.example/v3/${KEY} failed` }, 'transfer line failed');
    expect(line().error).toBe('broadcast to https://rpc.example failed');
    logger.warn({ err: new Error(`call to wss://keel:${PASSWORD}@node.example/ws/${KEY} failed`) }, 'x');
    expect(line().err.message).toBe('call to wss://node.example failed');
    logger.error(new Error(`GET https://keel:${PASSWORD}@rpc.example/${KEY} failed`));
    expect(line()).toMatchObject({ msg: 'GET https://rpc.example failed', err: { message: 'GET https://rpc.example failed' } });
    expect(JSON.stringify(line())).not.toContain(KEY);
  });

  test('a system error keeps its code, call and address', () => {
    const error = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED', errno: -111, syscall: 'connect', address: '127.0.0.1', port: 9 });
    const { logger, line } = capture();
    logger.warn({ err: error }, 'x');
    expect(line().err).toMatchObject({ message: 'connect ECONNREFUSED 127.0.0.1:9', code: 'ECONNREFUSED', errno: -111, syscall: 'connect', address: '127.0.0.1', port: 9 });
  });
});
