import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
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

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);
/** The names Keel's code gives a caught error. */
const CAUGHT = /^(e|err|error)$/;

/**
 * The fields of a log call (`logger.warn({ … }, 'why')`) that hand the logger an error as text: an
 * error's message (`e.message`, `(e as Error).message`, `shortMessage`), `shortReason(e)` or
 * `revertReason(e)`, or `String(e)`, unless it goes through `loggedError`. knex's message starts
 * with its SQL, ethers' quotes the request: the serializer takes them out of the error object only.
 */
function errorsLoggedAsText(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const textOf = (node: ts.Node): string[] => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'loggedError') return [];
    const own =
      (ts.isPropertyAccessExpression(node) && /^(message|shortMessage)$/.test(node.name.text)) ||
      (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && /^(shortReason|revertReason)$/.test(node.expression.text)) ||
      (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'String' && node.arguments.length === 1 && ts.isIdentifier(node.arguments[0]) && CAUGHT.test(node.arguments[0].text));
    const inner: string[] = [];
    ts.forEachChild(node, (child) => void inner.push(...textOf(child)));
    return [...(own ? [node.getText(source)] : []), ...inner];
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && LEVELS.has(node.expression.name.text) && /(^|\.)logger\??$/.test(node.expression.expression.getText(source))) {
      const [fields] = node.arguments;
      if (fields && ts.isObjectLiteralExpression(fields)) {
        for (const field of fields.properties) for (const hit of textOf(field)) found.push(`${file}:${source.getLineAndCharacterOfPosition(field.getStart(source)).line + 1}: ${hit}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
}

describe('log calls hand the logger errors, not their text', () => {
  test('the check finds an error logged as its message, a short reason or a string, and lets the error object, loggedError and plain facts by', () => {
    const text = `
      this.logger.warn({ err: e.message }, 'a');
      this.logger?.error({ shard, err: (e as Error).message }, 'b');
      logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'c');
      platform.logger.info({ reason: shortReason(error) }, 'd');
      this.logger.warn(
        { itemId, err: revertReason(err) },
        'e',
      );
      this.logger.warn({ err: e, knex: loggedError(String(message)), locked: String(e.locked), count: String(n) }, 'fine');
      other.warn({ err: e.message });
    `;
    expect(errorsLoggedAsText('sample.ts', text)).toEqual([
      'sample.ts:2: e.message',
      'sample.ts:3: (e as Error).message',
      'sample.ts:4: e.message',
      'sample.ts:4: String(e)',
      'sample.ts:5: shortReason(error)',
      'sample.ts:7: revertReason(err)',
    ]);
  });

  test('no log call in src/ or rest-compat/ does', () => {
    const root = join(__dirname, '..', '..', '..');
    const files = [...sources(join(root, 'src')), ...sources(join(root, 'rest-compat'))];
    expect(files.length).toBeGreaterThan(100);
    const logging = files.map((f) => ({ file: f.slice(root.length + 1), text: readFileSync(f, 'utf8') })).filter(({ text }) => text.includes('logger'));
    expect(logging.flatMap(({ file, text }) => errorsLoggedAsText(file, text))).toEqual([]);
  });
});
