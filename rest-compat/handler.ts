import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GraphQLError, GraphQLSchema } from 'graphql';
import { toKeelError } from '../src/graphql-kit/errors';
import type { GraphQLContext } from '../src/graphql-kit/context';
import { operationAuthorizer } from '../src/graphql-kit/root-field-grants';
import { CompiledRoute, compileRoute, toGraphQLPath } from './compile';
import { compiledRunner } from './executor';
import { envelope } from './envelope';
import type { RouteRow } from './route-table';

/** A row made ready to serve: its operation, the grant check for its root field, and its runner. */
interface PreparedRoute {
  route: CompiledRoute;
  authorize: ReturnType<typeof operationAuthorizer>;
  run: ReturnType<typeof compiledRunner>;
}

/**
 * The one handler behind every REST row: authorise the caller for the row's root field, bind the
 * request to the operation's variables, run the pre-parsed GraphQL operation in-process, and
 * envelope the result. No endpoint has code of its own.
 *
 * A row's operation is compiled on the row's first request, not at start: compiling every row
 * (the document checked against the schema, the body's JSON Schema, graphql-jit) took about 0.75 s
 * of a node's start for routes most nodes never serve, a few ms each on first use. Every row is
 * compiled by the tests (graphql-limits, rest-compiled-execution), so a row the schema refuses
 * fails there, not at a caller. Returns the compiled rows (compiling those not compiled yet), for the
 * OpenAPI document.
 */
export function registerRestRoutes(
  app: FastifyInstance,
  schema: GraphQLSchema,
  rows: RouteRow[],
  contextFor: (req: FastifyRequest) => GraphQLContext,
): () => CompiledRoute[] {
  const prepared = rows.map((row) => {
    let ready: PreparedRoute | undefined;
    const prepare = (): PreparedRoute => {
      if (ready) return ready;
      const route = compileRoute(schema, row);
      return (ready = { route, authorize: operationAuthorizer(schema, route.document), run: compiledRunner(schema, route.document) });
    };
    app.route({
      method: row.method,
      url: toGraphQLPath(row.path),
      // Before the body's text check, idempotency claim and variable binding: a caller without the
      // grant learns nothing about its input.
      preValidation: (req, _reply, done) => {
        try {
          const { route, authorize } = prepare();
          authorize(contextFor(req), rawVariables(route, req));
        } catch (error) {
          return done(error as Error);
        }
        done();
      },
      handler: async (req, reply) => {
        const { route, run } = prepare();
        const variableValues = route.variables({
          params: req.params as Record<string, string>,
          query: req.query as Record<string, unknown>,
          body: req.body,
        });
        const result = await run(variableValues, contextFor(req));
        if (result.errors?.length) {
          const error = toKeelError(result.errors[0]);
          // An internal error reaches the error handler as it was raised, so it is logged with its
          // stack (a KeelError is answered without a log line); the client gets INTERNAL_ERROR either way.
          throw error.code === 'INTERNAL_ERROR' ? raised(result.errors[0]) : error;
        }
        const value = (result.data as Record<string, unknown>)[row.field];
        return reply.code(row.status ?? 200).send(envelope(row.envelope, value));
      },
    });
    return prepare;
  });
  return () => prepared.map((prepare) => prepare().route);
}

/** What a resolver threw, under graphql-js's wrapping. */
function raised(error: GraphQLError): unknown {
  let current: unknown = error;
  while (current instanceof GraphQLError && current.originalError) current = current.originalError;
  return current;
}

/** The request's values under the operation's variable names (each named after its argument), as sent. */
function rawVariables(route: CompiledRoute, req: FastifyRequest): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const { param, arg } of route.pathArgs) variables[arg.name] = (req.params as Record<string, string>)[param];
  if (route.bodyArg) variables[route.bodyArg.name] = req.body;
  return variables;
}
