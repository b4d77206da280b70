import { GraphQLError, Kind } from 'graphql';
import { MAX_NESTING, MAX_TOKENS, parseDocument } from '../../../src/graphql-kit/query-limits';
import { KeelError } from '../../../src/platform/errors';

const nested = (levels: number) => `{ ${'a { '.repeat(levels - 1)}b${' }'.repeat(levels - 1)} }`;

test('a document nested up to MAX_NESTING parses; one level more is 400 BAD_REQUEST, however deep, and no RangeError escapes', () => {
  expect(parseDocument(nested(MAX_NESTING)).definitions[0].kind).toBe(Kind.OPERATION_DEFINITION);
  for (const levels of [MAX_NESTING + 1, 9_000]) {
    const refusal = (() => {
      try {
        parseDocument(nested(levels));
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(KeelError);
    expect(refusal).toMatchObject({ code: 'BAD_REQUEST', status: 400, message: expect.stringMatching(/Nesting limit of 500 exceeded/) });
  }
  expect(() => parseDocument(`{ a(x: ${'['.repeat(9_000)}1${']'.repeat(9_000)}) }`)).toThrow(/Nesting limit/);
  expect(() => parseDocument(`{ a(x: ${'{ k: '.repeat(9_000)}1${' }'.repeat(9_000)}) }`)).toThrow(/Nesting limit/);
});

test('braces in strings and comments do not count; syntax errors and the token limit are graphql-js own', () => {
  expect(() => parseDocument(`{ a(x: "${'{'.repeat(2_000)}") # ${'['.repeat(2_000)}\n}`)).not.toThrow();
  expect(() => parseDocument('{ a(')).toThrow(GraphQLError);
  expect(() => parseDocument(`{ ${'a '.repeat(MAX_TOKENS)}}`)).toThrow(/tokens/);
});
