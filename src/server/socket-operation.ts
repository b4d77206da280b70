import { DocumentNode, getOperationAST, GraphQLError, GraphQLSchema } from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import { parseDocument } from '../graphql-kit/query-limits';
import { isKeelError, KeelError } from '../platform/errors';
import { asGraphQLError } from '../graphql-kit/errors';

export interface SocketOperation {
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Record<string, unknown> | null;
}

/** Documents already parsed and found valid, per schema and text: many subscribers send the same one. */
const validDocuments = new WeakMap<GraphQLSchema, Map<string, DocumentNode>>();
const MAX_CACHED_DOCUMENTS = 1_000;

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
  let cache = validDocuments.get(schema);
  if (!cache) validDocuments.set(schema, (cache = new Map()));
  let document = cache.get(payload.query);
  if (!document) {
    try {
      document = parseDocument(payload.query);
    } catch (error) {
      if (error instanceof GraphQLError || isKeelError(error)) return [asGraphQLError(error)];
      throw error;
    }
    const errors = validate(schema, document);
    if (errors.length) return errors;
    if (cache.size >= MAX_CACHED_DOCUMENTS) cache.clear();
    cache.set(payload.query, document);
  }
  const operation = getOperationAST(document, payload.operationName);
  if (!operation) return [new GraphQLError('Unable to identify the operation: name one with operationName')];
  if (operation.operation !== 'subscription') {
    return [asGraphQLError(new KeelError('BAD_REQUEST', `Only subscriptions run over graphql-ws; send ${operation.operation === 'query' ? 'queries' : 'mutations'} to POST /graphql`))];
  }
  return { document, operationName: payload.operationName, variableValues: payload.variables };
}
