import { onlyReadsUsage } from '../../../src/server/usage-reads';

describe('a GraphQL request that only reads the usage (answered once the monthly quota is spent)', () => {
  test.each([
    ['the field alone', { query: '{ organizationUsage { used } }' }],
    ['beside __typename, named', { query: 'query U { __typename organizationUsage { used } }', operationName: 'U' }],
    ['the named operation of two that only reads it', { query: 'query A { organization { id } } query B { organizationUsage { used } }', operationName: 'B' }],
    ['aliased', { query: '{ u: organizationUsage { used } }' }],
  ])('is %s', (_, body) => expect(onlyReadsUsage(body)).toBe(true));

  test.each([
    ['another root field beside it', { query: '{ organizationUsage { used } organization { id } }' }],
    ['a mutation', { query: 'mutation { organizationUsage { used } }' }],
    ['a subscription', { query: 'subscription { organizationUsage { used } }' }],
    ['a fragment spread at the root', { query: '{ ...U } fragment U on Query { organizationUsage { used } }' }],
    ['an inline fragment at the root', { query: '{ ... on Query { organizationUsage { used } } }' }],
    ['two operations without a name chosen', { query: 'query A { organizationUsage { used } } query B { organizationUsage { used } }' }],
    ['a name that is not there', { query: '{ organizationUsage { used } }', operationName: 'Other' }],
    ['a persisted query hash without its document', { extensions: { persistedQuery: { version: 1, sha256Hash: 'ab' } } }],
    ['a document that does not parse', { query: '{ organizationUsage { used }' }],
    ['a batch', [{ query: '{ organizationUsage { used } }' }]],
    ['no body', undefined],
  ])('is not %s', (_, body) => expect(onlyReadsUsage(body)).toBe(false));
});
