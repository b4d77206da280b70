import { Kind, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { parseDocument } from '../graphql-kit/query-limits';

/**
 * Reading the month's usage is answered even once the monthly quota is spent: it is how a client
 * learns why it is refused and when it may go on. These requests are rate limited as any other.
 */
export const USAGE_PATH = '/v1/organization/usage';

const USAGE_ROOT_FIELDS = new Set(['organizationUsage', '__typename']);

/**
 * Whether a GraphQL request body (`{query, operationName}`) runs only a query whose root fields read
 * the organisation's usage. Anything else (a mutation, another field, a fragment, a batch, a
 * persisted query's bare hash, a document that does not parse) is not.
 */
export function onlyReadsUsage(body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { query, operationName } = body as { query?: unknown; operationName?: unknown };
  if (typeof query !== 'string') return false;
  let document: DocumentNode;
  try {
    document = parseDocument(query);
  } catch {
    return false;
  }
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operations.length !== document.definitions.length) return false;
  const operation = typeof operationName === 'string' ? operations.find((o) => o.name?.value === operationName) : operations.length === 1 ? operations[0] : undefined;
  return (
    operation?.operation === 'query' &&
    operation.selectionSet.selections.every((s) => s.kind === Kind.FIELD && USAGE_ROOT_FIELDS.has(s.name.value))
  );
}
