import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ethers } from 'ethers';
import { createDb, Db } from '../../../src/platform/db/knex';
import { KeelError } from '../../../src/platform/errors';
import { createLogger } from '../../../src/platform/logger';
import { INTERNAL_REASON, shownReason } from '../../../src/platform/shown-reason';
import { createTestDatabase, dropTestDatabase, runPrefix } from '../../support/databases';

/**
 * What a caller reads for an error that ends in a row or an answer: a chain's refusal and Keel's own
 * refusals in their own words (URLs cut to their origin), anything else (a database error above
 * all, whose message knex prefixes with its SQL) as a generic text. shownReason logs nothing: its
 * caller logs the error object, once (the callers' own tests), and the log's serializer keeps what is
 * safe of it.
 */
const NAME = `${runPrefix()}_shown_reason`;
const KEY = 'SECRETKEY0123456789';
let readOnly: Db;
let node: http.Server;
/** The JSON-RPC error the loopback node answers every request with. */
let nodeError: { code: number; message: string; data?: string };
let nodeUrl: string;

beforeAll(async () => {
  const url = new URL(await createTestDatabase(NAME));
  url.searchParams.set('options', '-c default_transaction_read_only=on');
  readOnly = createDb(url.toString(), 1);
  node = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(body).id, error: nodeError }));
    });
  });
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
  nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}/v2/${KEY}`;
});

afterAll(async () => {
  await new Promise((resolve) => node.close(resolve));
  await readOnly.destroy();
  await dropTestDatabase(NAME);
});

function capture() {
  const lines: string[] = [];
  return { logger: createLogger('warn', { write: (line: string) => void lines.push(line) }), lines };
}

/** What a real ethers provider raises when the node answers `nodeError`. */
async function ethersError(ask: (provider: ethers.JsonRpcProvider) => Promise<unknown>): Promise<unknown> {
  const provider = new ethers.JsonRpcProvider(nodeUrl, 1, { staticNetwork: true });
  try {
    return await ask(provider).then(() => new Error('the node answered'), (e: unknown) => e);
  } finally {
    provider.destroy();
  }
}

test("a contract's revert keeps its reason", async () => {
  const revertData = ethers.id('Error(string)').slice(0, 10) + ethers.AbiCoder.defaultAbiCoder().encode(['string'], ['amount exceeds balance']).slice(2);
  nodeError = { code: 3, message: 'execution reverted: amount exceeds balance', data: revertData };
  const error = await ethersError((p) => p.call({ to: ethers.ZeroAddress, data: '0x' }));
  expect(error).toMatchObject({ code: 'CALL_EXCEPTION', reason: 'amount exceeds balance' });
  expect(shownReason(error)).toMatch(/amount exceeds balance/);
});

test("a node's words are kept with every URL in them cut to its origin", async () => {
  nodeError = { code: -32005, message: `daily request count exceeded, see ${nodeUrl}/usage` };
  const error = await ethersError((p) => p.getBalance(ethers.ZeroAddress));
  expect(JSON.stringify(error)).toContain(KEY);
  const reason = shownReason(error);
  expect(reason).toBe(`daily request count exceeded, see ${new URL(nodeUrl).origin}`);
});

test("Keel's own refusal is shown in its own words", () => {
  expect(shownReason(new KeelError('INSUFFICIENT_FUNDS', '0xabc cannot pay the gas of this settlement out of the deposit'))).toBe('0xabc cannot pay the gas of this settlement out of the deposit');
});

test("a database error is the generic text to the caller; the caller's log line of it has PostgreSQL's words, not knex's SQL", async () => {
  const error = await readOnly.raw('create table shown_reason_probe (secret_column text)').then(() => new Error('PostgreSQL took it'), (e: unknown) => e);
  expect(String((error as Error).message)).toMatch(/create table shown_reason_probe/);
  expect(shownReason(error)).toBe(INTERNAL_REASON);
  const { logger, lines } = capture();
  logger.warn({ executionId: 'e-1', err: error }, 'settlement rule execution failed');
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0])).toMatchObject({ executionId: 'e-1', err: { type: 'DatabaseError', code: '25006', message: 'cannot execute CREATE TABLE in a read-only transaction' } });
  expect(lines[0]).not.toMatch(/shown_reason_probe|secret_column/);
});

test('an unexpected exception is the generic text', () => {
  expect(shownReason(new TypeError("Cannot read properties of undefined (reading 'decimals')"))).toBe(INTERNAL_REASON);
  expect(shownReason('a thrown string')).toBe(INTERNAL_REASON);
});
