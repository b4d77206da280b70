import type { FastifyInstance, FastifyRequest } from 'fastify';
import { KeelError, type FieldError } from '../platform/errors';
import { unstorableText } from '../platform/storable-text';
import { graphqlGetParams } from './graphql-get-params';

/**
 * Refuses a request whose path, query or body holds, in a string or an object key, U+0000 or a lone
 * surrogate with 422 naming the field: PostgreSQL cannot store either, so it would otherwise fail
 * deep inside a write. Registered before the idempotency guard, so such a request claims no key.
 */
export function registerTextCheck(app: FastifyInstance): void {
  app.addHook('preHandler', (request, _reply, done) => {
    const bad = unstorableText(request.params) ?? unstorableText(request.query) ?? unstorableText(request.body) ?? getVariablesText(request);
    done(bad === undefined ? undefined : KeelError.invalidField(bad.field, bad.error));
  });
}

/** GraphQL over GET sends its variables as JSON text, which Apollo parses after this check: checked parsed. */
function getVariablesText(request: FastifyRequest): FieldError | undefined {
  if (request.method !== 'GET' || request.routeOptions.url !== '/graphql') return undefined;
  const text = graphqlGetParams(request).variables;
  if (typeof text !== 'string') return undefined;
  let variables: unknown;
  try {
    variables = JSON.parse(text);
  } catch {
    return undefined; // Apollo answers malformed variables itself
  }
  const bad = unstorableText(variables);
  return bad && { ...bad, field: `variables.${bad.field}` };
}
