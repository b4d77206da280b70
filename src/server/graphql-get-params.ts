import type { FastifyRequest } from 'fastify';
import type { GraphQLParams } from './persisted-queries';

/**
 * GraphQL over GET: its parameters exactly as Apollo's Fastify integration reads them (the WHATWG
 * URL's search: a `#` ends it; a repeated parameter's first value), so every check made before
 * Apollo runs (authorisation, the spent-quota guard) sees what will run, whatever Fastify's own
 * query-string parse makes of a malformed escape or a fragment.
 */
export function graphqlGetParams(request: FastifyRequest): GraphQLParams {
  const search = new URL(request.raw.url ?? '/', 'http://keel.invalid').searchParams;
  const params: Record<string, string> = {};
  for (const name of ['query', 'operationName', 'variables', 'extensions']) {
    const value = search.get(name);
    if (value !== null) params[name] = value;
  }
  return params as GraphQLParams;
}
