import type { FastifyInstance, FastifyRequest } from 'fastify';
import { KeelError, type FieldError } from '../platform/errors';
import { unstorableInput } from '../platform/storable-text';
import { graphqlGetParams } from './graphql-get-params';

/**
 * Refuses a request whose path, query or body holds, in a string or an object key, U+0000 or a lone
 * surrogate, or whose body nests objects and arrays deeper than `maxDepth` (BODY_MAX_DEPTH), with 422
 * naming the field: PostgreSQL cannot store the first, and the second would exhaust the call stack
 * of the code that copies a value for a write; either would otherwise fail deep inside a write as a
 * 500. Registered before the idempotency guard, so such a request claims no key.
 */
export function registerTextCheck(app: FastifyInstance, maxDepth: number): void {
  app.addHook('preHandler', (request, _reply, done) => {
    const bad = unstorableInput(request.params) ?? unstorableInput(request.query) ?? unstorableInput(request.body, maxDepth) ?? getVariablesText(request, maxDepth);
    done(refusalOf(bad));
  });
}

/**
 * The same check of a graphql-ws subscribe message's payload (`query`, `operationName`,
 * `variables`, `extensions`: a POST /graphql body's shape, so a field is named as it is there,
 * `variables.<name>…`): the 422 INVALID_FIELD to answer, or undefined.
 */
export function subscribePayloadRefusal(payload: unknown, maxDepth: number): KeelError | undefined {
  return refusalOf(unstorableInput(payload, maxDepth));
}

function refusalOf(bad: FieldError | undefined): KeelError | undefined {
  return bad && KeelError.invalidField(bad.field, bad.error);
}

/**
 * GraphQL over GET sends its variables as JSON text, which Apollo parses after this check: checked
 * parsed, one level deeper than they stand, as they would in a POST body's `variables`.
 */
function getVariablesText(request: FastifyRequest, maxDepth: number): FieldError | undefined {
  if (request.method !== 'GET' || request.routeOptions.url !== '/graphql') return undefined;
  const text = graphqlGetParams(request).variables;
  if (typeof text !== 'string') return undefined;
  let variables: unknown;
  try {
    variables = JSON.parse(text);
  } catch {
    return undefined; // Apollo answers malformed variables itself
  }
  const bad = unstorableInput(variables, maxDepth - 1);
  return bad && { ...bad, field: `variables.${bad.field}` };
}
