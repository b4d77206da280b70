import { createHash } from 'node:crypto';
import { DocumentNode, getOperationAST, GraphQLError, GraphQLSchema } from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import { parseCountedDocument } from '../graphql-kit/query-limits';
import { isKeelError, KeelError } from '../platform/errors';
import { BoundedCache } from '../platform/bounded-cache';
import { asGraphQLError } from '../graphql-kit/errors';

export interface SocketOperation {
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Record<string, unknown> | null;
}

/**
 * Documents already parsed and found valid, per schema, under the SHA-256 of their text: many
 * subscribers send the same one. Parsed without locations, a document keeps nothing of its text
 * (comments and whitespace included); it weighs what its nodes do, which grow with its tokens.
 * A longer text is parsed and validated on every subscribe and never kept.
 */
const validDocuments = new WeakMap<GraphQLSchema, BoundedCache<DocumentNode>>();
export const MAX_CACHED_DOCUMENT_BYTES = 16 * 1024;
export const DOCUMENT_CACHE_LIMITS = { maxEntries: 1_000, maxBytes: 16 * 1024 * 1024 };
/** What a parsed document (no locations) and its printed text hold per token, at most (measured: 50–190 bytes). */
const BYTES_PER_TOKEN = 256;

/** The parsed documents graphql-ws keeps for a schema: how many, and what they weigh. */
export function cachedDocuments(schema: GraphQLSchema): { entries: number; bytes: number } {
  const cache = validDocuments.get(schema);
  return { entries: cache?.size ?? 0, bytes: cache?.bytes ?? 0 };
}

/**
 * Parses and validates a document sent over graphql-ws, and admits subscriptions only. Queries and
 * mutations go over HTTP, where idempotency keys, the body checks and per-request logs apply.
 * Returns the errors to send back instead of the operation when it is refused. Errors carry no
 * locations over graphql-ws (formatWsError), so the document is parsed without them.
 */
export function prepareSocketOperation(
  schema: GraphQLSchema,
  validate: (schema: GraphQLSchema, document: DocumentNode) => readonly GraphQLError[],
  payload: SubscribePayload,
): SocketOperation | readonly GraphQLError[] {
  let cache = validDocuments.get(schema);
  if (!cache) validDocuments.set(schema, (cache = new BoundedCache(DOCUMENT_CACHE_LIMITS)));
  const key = Buffer.byteLength(payload.query) <= MAX_CACHED_DOCUMENT_BYTES ? createHash('sha256').update(payload.query).digest('base64') : undefined;
  let document = key === undefined ? undefined : cache.get(key);
  if (!document) {
    let tokens: number;
    try {
      ({ document, tokens } = parseCountedDocument(payload.query, { noLocation: true }));
    } catch (error) {
      if (error instanceof GraphQLError || isKeelError(error)) return [asGraphQLError(error)];
      throw error;
    }
    const errors = validate(schema, document);
    if (errors.length) return errors;
    if (key !== undefined) cache.set(key, document, tokens * BYTES_PER_TOKEN);
  }
  const operation = getOperationAST(document, payload.operationName);
  if (!operation) return [new GraphQLError('Unable to identify the operation: name one with operationName')];
  if (operation.operation !== 'subscription') {
    return [asGraphQLError(new KeelError('BAD_REQUEST', `Only subscriptions run over graphql-ws; send ${operation.operation === 'query' ? 'queries' : 'mutations'} to POST /graphql`))];
  }
  return { document, operationName: payload.operationName, variableValues: payload.variables };
}
