import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { buildSchema, DocumentNode, GraphQLError } from 'graphql';
import { cachedDocuments, prepareSocketOperation, SocketOperation } from '../../../src/server/socket-operation';
import { queryLimitRules, validateWithLimits } from '../../../src/graphql-kit/query-limits';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const validate = validateWithLimits(queryLimitRules({ maxDepth: 10, maxAliases: 30, maxCost: 5_000 }));
const newSchema = () => buildSchema('type Query { a: Int } type Subscription { trades(symbol: String!, ids: [Int!]): Int }');
const SUBSCRIPTION = 'subscription { trades(symbol: "ETH-USDC") }';
const MiB = 1024 * 1024;

/** A valid subscription behind almost a MiB of comment: no tokens, so within every query limit. */
const padded = (i: number) => `# ${i} ${'x'.repeat(MiB - 64)}\n${SUBSCRIPTION}`;

function prepared(schema: ReturnType<typeof newSchema>, query: string): SocketOperation {
  const operation = prepareSocketOperation(schema, validate, { query });
  if (Array.isArray(operation)) throw new Error(`refused: ${(operation as GraphQLError[]).map((e) => e.message).join('; ')}`);
  return operation as SocketOperation;
}

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('documents sent over graphql-ws', () => {
  test('padded with a MiB of comment, 100 distinct ones subscribed and completed leave nothing of their text behind', () => {
    const schema = newSchema();
    const documents: DocumentNode[] = [];
    const before = heapUsed();
    for (let i = 0; i < 100; i++) documents.push(prepared(schema, padded(i)).document);
    const retained = heapUsed() - before;

    // Measured before: 100 MiB (every text kept, through the cache and each document's loc.source).
    expect(retained).toBeLessThan(16 * MiB);
    expect(cachedDocuments(schema)).toEqual({ entries: 0, bytes: 0 });
    expect(documents).toHaveLength(100);
  });

  test('are kept once parsed when small: the same text is parsed once, a long one on every subscribe', () => {
    const schema = newSchema();
    expect(prepared(schema, SUBSCRIPTION).document).toBe(prepared(schema, SUBSCRIPTION).document);
    expect(prepared(schema, padded(1)).document).not.toBe(prepared(schema, padded(1)).document);
    expect(cachedDocuments(schema).entries).toBe(1);
  });

  test('kept, stay within the cache bound however many distinct ones arrive', () => {
    const schema = newSchema();
    // Among the heaviest kept: 16 KiB that are nearly all tokens (a list argument, within every limit).
    const dense = (i: number) => `subscription { trades(symbol: "${i}", ids: [${'1 '.repeat(8_000)}]) }`;
    for (let i = 0; i < 30; i++) prepared(schema, dense(i));

    const { entries, bytes } = cachedDocuments(schema);
    expect(entries).toBeGreaterThan(0);
    expect(entries).toBeLessThan(30);
    expect(bytes).toBeLessThanOrEqual(16 * MiB);
  });

  test('parsed without locations still answer syntax and validation errors by their messages', () => {
    const schema = newSchema();
    const syntax = prepareSocketOperation(schema, validate, { query: 'subscription { trades(' }) as GraphQLError[];
    expect(syntax[0].message).toMatch(/^Syntax Error: /);
    const invalid = prepareSocketOperation(schema, validate, { query: 'subscription { trades }' }) as GraphQLError[];
    expect(invalid[0].message).toMatch(/argument "symbol" of type "String!" is required/);
  });
});
