import { createHash } from 'node:crypto';
import { persistedQueryAsk, withoutPersistedQuery } from '../../../src/server/persisted-queries';
import { isKeelError } from '../../../src/platform/errors';

const QUERY = '{ organization { id } }';
const HASH = createHash('sha256').update(QUERY).digest('hex');
const persisted = (sha256Hash: unknown = HASH, version: unknown = 1) => ({ persistedQuery: { version, sha256Hash } });

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isKeelError(error)) return `${error.status} ${error.message}`;
    throw error;
  }
  return 'no refusal';
}

describe('persistedQueryAsk: what a request asks of the persisted-query store', () => {
  test('nothing without extensions.persistedQuery', () => {
    expect(persistedQueryAsk(undefined)).toBeUndefined();
    expect(persistedQueryAsk({ query: QUERY })).toBeUndefined();
    expect(persistedQueryAsk({ query: QUERY, extensions: { other: 1 } })).toBeUndefined();
    expect(persistedQueryAsk({ extensions: 'not json' })).toBeUndefined();
  });

  test('a hash alone asks for its document; with the document, to register it (the extensions as an object or as GET\'s JSON text)', () => {
    expect(persistedQueryAsk({ extensions: persisted() })).toEqual({ hash: HASH });
    expect(persistedQueryAsk({ extensions: JSON.stringify(persisted()) })).toEqual({ hash: HASH });
    expect(persistedQueryAsk({ query: QUERY, extensions: persisted() })).toEqual({ hash: HASH, document: QUERY });
  });

  test('400 for another version, a hash that is no SHA-256, or a document that is not the hash\'s', () => {
    expect(refusal(() => persistedQueryAsk({ extensions: persisted(HASH, 2) }))).toBe('400 Unsupported persisted query version');
    expect(refusal(() => persistedQueryAsk({ extensions: persisted(HASH.toUpperCase()) }))).toMatch(/^400 persistedQuery.sha256Hash must be/);
    expect(refusal(() => persistedQueryAsk({ extensions: persisted(42) }))).toMatch(/^400 /);
    expect(refusal(() => persistedQueryAsk({ query: `${QUERY} `, extensions: persisted() }))).toBe('400 provided sha does not match query');
  });
});

test('withoutPersistedQuery keeps the other extensions, in the form they came', () => {
  expect(withoutPersistedQuery(persisted())).toBeUndefined();
  expect(withoutPersistedQuery({ ...persisted(), trace: true })).toEqual({ trace: true });
  expect(withoutPersistedQuery(JSON.stringify({ ...persisted(), trace: true }))).toBe('{"trace":true}');
  expect(withoutPersistedQuery(JSON.stringify(persisted()))).toBeUndefined();
});
