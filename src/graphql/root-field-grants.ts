import { DocumentNode, FragmentDefinitionNode, getOperationAST, GraphQLSchema, Kind, parse, SelectionSetNode } from 'graphql';
import { getMetadataStorage } from 'type-graphql';
import { MAX_TOKENS } from './query-limits';
import { requireGrant } from './auth-checker';
import type { GraphQLContext } from './context';

type RootKind = 'query' | 'mutation' | 'subscription';

/** Per schema: `<operation kind>.<root field>` → the grants its @Authorized decorator names. */
const grantsBySchema = new WeakMap<GraphQLSchema, Map<string, string[]>>();

/**
 * Records, for a schema built by type-graphql from `resolvers`, what each root field's @Authorized
 * requires, so a request can be authorised from its document alone, before any variable is coerced
 * or any argument validated.
 */
export function registerRootFieldGrants(schema: GraphQLSchema, resolvers: readonly Function[]): void {
  const storage = getMetadataStorage();
  const grants = new Map<string, string[]>();
  const kinds: [RootKind, { target: Function; methodName: string; schemaName: string }[]][] = [
    ['query', storage.queries],
    ['mutation', storage.mutations],
    ['subscription', storage.subscriptions],
  ];
  for (const [kind, definitions] of kinds) {
    for (const d of definitions) {
      if (!resolvers.includes(d.target)) continue;
      const field = storage.authorizedFields.find((a) => a.target === d.target && a.fieldName === d.methodName);
      const resolver = storage.authorizedResolver.find((a) => a.target === d.target);
      const roles = (field ?? resolver)?.roles as string[] | undefined;
      if (roles?.length) grants.set(`${kind}.${d.schemaName}`, roles);
    }
  }
  grantsBySchema.set(schema, grants);
}

/** The root fields an operation selects, through fragments at the root level too. */
function rootFields(selectionSet: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, seen = new Set<string>()): string[] {
  const names: string[] = [];
  for (const s of selectionSet.selections) {
    if (s.kind === Kind.FIELD) names.push(s.name.value);
    else if (s.kind === Kind.INLINE_FRAGMENT) names.push(...rootFields(s.selectionSet, fragments, seen));
    else if (!seen.has(s.name.value)) {
      seen.add(s.name.value);
      const fragment = fragments.get(s.name.value);
      if (fragment) names.push(...rootFields(fragment.selectionSet, fragments, seen));
    }
  }
  return names;
}

/**
 * Authorisation before validation: every root field the operation selects must be granted to the
 * caller's key, whatever its arguments or variables, or the request is 403 naming what is missing.
 * A document that names no runnable operation is left to graphql-js to report.
 */
export function authorizeOperation(context: Pick<GraphQLContext, 'host' | 'principal'>, schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): void {
  const operation = getOperationAST(document, operationName);
  const grants = grantsBySchema.get(schema);
  if (!operation || !grants) return;
  const fragments = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]));
  for (const field of rootFields(operation.selectionSet, fragments)) {
    for (const need of grants.get(`${operation.operation}.${field}`) ?? []) requireGrant(context, need);
  }
}

/**
 * `authorizeOperation` for a client's document as sent (GraphQL over HTTP or graphql-ws), before
 * anything else reads it. A document that does not parse is left to the server to report.
 */
export function authorizeDocumentText(context: Pick<GraphQLContext, 'host' | 'principal'>, schema: GraphQLSchema, query: unknown, operationName?: unknown): void {
  if (typeof query !== 'string') return;
  let document: DocumentNode;
  try {
    document = parse(query, { maxTokens: MAX_TOKENS });
  } catch {
    return;
  }
  authorizeOperation(context, schema, document, typeof operationName === 'string' ? operationName : undefined);
}
