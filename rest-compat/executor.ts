import { DocumentNode, execute, ExecutionResult, getOperationAST, GraphQLError, GraphQLSchema, valueFromASTUntyped } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { GraphQLContext } from '../src/graphql-kit/context';

/** Runs one prepared operation with a request's variables. */
export type OperationRunner = (variableValues: Record<string, unknown>, contextValue: GraphQLContext) => Promise<ExecutionResult>;

/** A prepared operation run by graphql-js itself. */
export function interpretedRunner(schema: GraphQLSchema, document: DocumentNode): OperationRunner {
  return async (variableValues, contextValue) => execute({ schema, document, variableValues, contextValue });
}

/**
 * An operation compiled once with graphql-jit: the same resolvers (type-graphql's argument
 * validation and auth checker included), serialisers and error objects as graphql-js, without
 * re-reading the document on every request. A mutation's root fields run one after the other as
 * graphql-js runs them, inside the request's unit-of-work scope (resolvers run in the request's
 * async context either way). Where graphql-jit refuses the variables, nothing has run and graphql-js
 * runs the request instead, so a client sees graphql-js's own coercion errors; a document
 * graphql-jit cannot compile, and subscriptions, stay with graphql-js altogether.
 */
export function compiledRunner(schema: GraphQLSchema, document: DocumentNode): OperationRunner {
  const interpreted = interpretedRunner(schema, document);
  const operation = getOperationAST(document);
  if (operation?.operation !== 'query' && operation?.operation !== 'mutation') return interpreted;
  const compiled = compileQuery(schema, document);
  if (!isCompiledQuery(compiled)) return interpreted;
  const defaults = variableDefaults(document);
  return async (variableValues, contextValue) => {
    const result = await compiled.query(undefined, contextValue, withDefaults(variableValues, defaults));
    // Without `data` nothing ran: graphql-jit refused the variables.
    if (!('data' in result)) return interpreted(variableValues, contextValue);
    return result.errors?.some(raisedWithoutCause) ? { ...result, errors: result.errors.map(withCause) } : result;
  };
}

/**
 * graphql-jit raises some execution errors itself (a null in a non-null field) with no original
 * error, where graphql-js wraps an Error: given one here, they stay server errors (500), not the
 * client's (400).
 */
const raisedWithoutCause = (e: GraphQLError) => !e.originalError && e.path !== undefined;
const withCause = (e: GraphQLError) => (raisedWithoutCause(e) ? new GraphQLError(e.message, { nodes: e.nodes, path: e.path, originalError: new Error(e.message) }) : e);

/** The operation's variable defaults as a client would send them (an enum by its name). */
function variableDefaults(document: DocumentNode): [string, unknown][] {
  const definitions = getOperationAST(document)?.variableDefinitions ?? [];
  return definitions.filter((d) => d.defaultValue).map((d) => [d.variable.name.value, valueFromASTUntyped(d.defaultValue!)]);
}

/** graphql-jit does not apply the default of a non-null variable: an absent variable gets it here, as graphql-js would give it. */
function withDefaults(variables: Record<string, unknown>, defaults: [string, unknown][]): Record<string, unknown> {
  let filled = variables;
  for (const [name, value] of defaults) {
    if (filled[name] !== undefined) continue;
    if (filled === variables) filled = { ...variables };
    filled[name] = value;
  }
  return filled;
}
