import { DocumentNode, getOperationAST, GraphQLError, GraphQLSchema, parse } from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import { MAX_TOKENS } from '../graphql/query-limits';
import { KeelError } from '../platform/errors';
import { asGraphQLError } from '../graphql/errors';

export interface SocketOperation {
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Record<string, unknown> | null;
}

/**
 * Parses and validates a document sent over graphql-ws, and admits subscriptions only. Queries and
 * mutations go over HTTP, where idempotency keys, the body checks and per-request logs apply.
 * Returns the errors to send back instead of the operation when it is refused.
 */
export function prepareSocketOperation(
  schema: GraphQLSchema,
  validate: (schema: GraphQLSchema, document: DocumentNode) => readonly GraphQLError[],
  payload: SubscribePayload,
): SocketOperation | readonly GraphQLError[] {
  let document: DocumentNode;
  try {
    document = parse(payload.query, { maxTokens: MAX_TOKENS });
  } catch (error) {
    if (error instanceof GraphQLError) return [error];
    throw error;
  }
  const errors = validate(schema, document);
  if (errors.length) return errors;
  const operation = getOperationAST(document, payload.operationName);
  if (!operation) return [new GraphQLError('Unable to identify the operation: name one with operationName')];
  if (operation.operation !== 'subscription') {
    return [asGraphQLError(new KeelError('BAD_REQUEST', `Only subscriptions run over graphql-ws; send ${operation.operation === 'query' ? 'queries' : 'mutations'} to POST /graphql`))];
  }
  return { document, operationName: payload.operationName, variableValues: payload.variables };
}
