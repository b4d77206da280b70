import { DocumentNode, FieldNode, FragmentDefinitionNode, getOperationAST, GraphQLSchema, Kind, SelectionSetNode, valueFromASTUntyped } from 'graphql';
import { getMetadataStorage, UseMiddleware } from 'type-graphql';
import { parseDocument } from './query-limits';
import { isKeelError } from '../platform/errors';
import { requireGrant } from './auth-checker';
import type { GraphQLContext } from './context';

type RootKind = 'query' | 'mutation' | 'subscription';

/** A grant a root field needs only for some arguments (a wallet's security settings need `admin`). */
export interface ArgumentGrant {
  grant: string;
  /** Appended to the 403's message, e.g. "to change configurations.security". */
  purpose: string;
}
/** Reads the arguments as the caller sent them (not yet coerced or validated) and names any further grant they need. */
export type ArgumentGrantRule = (args: Record<string, unknown>) => ArgumentGrant | undefined;

interface FieldGrants {
  roles: string[];
  rule?: ArgumentGrantRule;
}

/** Per schema: `<operation kind>.<root field>` → what its @Authorized and @AuthorizedWhen decorators require. */
const grantsBySchema = new WeakMap<GraphQLSchema, Map<string, FieldGrants>>();
const argumentRules = new Map<Function, Map<string, ArgumentGrantRule>>();

/**
 * Beside @Authorized: a further grant the root field needs when its arguments touch something more
 * sensitive. Checked with the others, before any argument is coerced or validated.
 */
export function AuthorizedWhen(rule: ArgumentGrantRule): MethodDecorator {
  // Checked again on the coerced arguments when the field runs, like @Authorized's authChecker, for
  // a field reached any other way.
  const atExecution = UseMiddleware(({ args, context }: { args: Record<string, unknown>; context: GraphQLContext }, next: () => Promise<unknown>) => {
    const extra = rule(args);
    if (extra) requireGrant(context, extra.grant, extra.purpose);
    return next();
  });
  return (target, methodName, descriptor) => {
    const rules = argumentRules.get(target.constructor) ?? new Map<string, ArgumentGrantRule>();
    rules.set(String(methodName), rule);
    argumentRules.set(target.constructor, rules);
    atExecution(target, methodName, descriptor);
  };
}

/**
 * Records, for a schema built by type-graphql from `resolvers`, what each root field's @Authorized
 * requires, so a request can be authorised from its document alone, before any variable is coerced
 * or any argument validated.
 */
export function registerRootFieldGrants(schema: GraphQLSchema, resolvers: readonly Function[]): void {
  const storage = getMetadataStorage();
  const grants = new Map<string, FieldGrants>();
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
      const roles = ((field ?? resolver)?.roles as string[] | undefined) ?? [];
      const rule = argumentRules.get(d.target)?.get(d.methodName);
      if (roles.length || rule) grants.set(`${kind}.${d.schemaName}`, { roles, rule });
    }
  }
  grantsBySchema.set(schema, grants);
}

/** The root fields an operation selects, through fragments at the root level too. */
function rootFields(selectionSet: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>, seen = new Set<string>()): FieldNode[] {
  const names: FieldNode[] = [];
  for (const s of selectionSet.selections) {
    if (s.kind === Kind.FIELD) names.push(s);
    else if (s.kind === Kind.INLINE_FRAGMENT) names.push(...rootFields(s.selectionSet, fragments, seen));
    else if (!seen.has(s.name.value)) {
      seen.add(s.name.value);
      const fragment = fragments.get(s.name.value);
      if (fragment) names.push(...rootFields(fragment.selectionSet, fragments, seen));
    }
  }
  return names;
}

/** Checks a caller against one operation's grants; `variables` are the request's, as sent. */
export type OperationAuthorizer = (context: Pick<GraphQLContext, 'host' | 'principal'>, variables?: Record<string, unknown>) => void;

const NOTHING_TO_CHECK: OperationAuthorizer = () => undefined;

/**
 * Authorisation before validation: every root field the operation selects must be granted to the
 * caller's key, whatever its arguments or variables, or the request is 403 naming what is missing;
 * so must what @AuthorizedWhen asks of the arguments as sent (`variables` raw, before coercion).
 * A document that names no runnable operation is left to graphql-js to report. What the document
 * needs is read once, so a document run many times (a REST row's) is prepared once.
 */
export function operationAuthorizer(schema: GraphQLSchema, document: DocumentNode, operationName?: string | null): OperationAuthorizer {
  const operation = getOperationAST(document, operationName);
  const grants = grantsBySchema.get(schema);
  if (!operation || !grants) return NOTHING_TO_CHECK;
  const fragments = new Map(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]));
  const checks: { field: FieldNode; needs: FieldGrants }[] = [];
  for (const field of rootFields(operation.selectionSet, fragments)) {
    const needs = grants.get(`${operation.operation}.${field.name.value}`);
    if (needs) checks.push({ field, needs });
  }
  if (!checks.length) return NOTHING_TO_CHECK;
  // A variable the caller leaves out takes the default its operation declares, as it will when run.
  const defaults = (operation.variableDefinitions ?? []).filter((d) => d.defaultValue !== undefined).map((d) => [d.variable.name.value, d.defaultValue!] as const);
  return (context, given = {}) => {
    const variables = { ...given };
    for (const [name, value] of defaults) if (!(name in variables)) variables[name] = valueFromASTUntyped(value);
    for (const { field, needs } of checks) {
      for (const need of needs.roles) requireGrant(context, need);
      const extra = needs.rule?.(rawArguments(field, variables));
      if (extra) requireGrant(context, extra.grant, extra.purpose);
    }
  };
}

/** `operationAuthorizer` for a document checked once. */
export function authorizeOperation(
  context: Pick<GraphQLContext, 'host' | 'principal'>,
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName?: string | null,
  variables: Record<string, unknown> = {},
): void {
  operationAuthorizer(schema, document, operationName)(context, variables);
}

/** A field's arguments as the caller sent them: literals as written, variables as given (nothing coerced). */
function rawArguments(field: FieldNode, variables: Record<string, unknown>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const arg of field.arguments ?? []) args[arg.name.value] = valueFromASTUntyped(arg.value, variables);
  return args;
}

/**
 * `authorizeOperation` for a client's document as sent (GraphQL over HTTP or graphql-ws), before
 * anything else reads it. Returns the parsed document for the caller to read further; a document
 * that does not parse is left to the server to report (undefined), except one nested past
 * MAX_NESTING (400 BAD_REQUEST: see parseDocument).
 */
export function authorizeDocumentText(context: Pick<GraphQLContext, 'host' | 'principal'>, schema: GraphQLSchema, query: unknown, operationName?: unknown, variables?: unknown): DocumentNode | undefined {
  if (typeof query !== 'string') return undefined;
  let document: DocumentNode;
  try {
    document = parseDocument(query);
  } catch (error) {
    // Nested too deep for the server's own parser to follow: refused here, before it tries.
    if (isKeelError(error)) throw error;
    return undefined;
  }
  const given = variables !== null && typeof variables === 'object' && !Array.isArray(variables) ? (variables as Record<string, unknown>) : {};
  authorizeOperation(context, schema, document, typeof operationName === 'string' ? operationName : undefined, given);
  return document;
}

/**
 * How many requests an operation counts for against the rate limit and the monthly quota: a
 * mutation one per root field it runs (each is the work of a REST call, and aliases let one document
 * name up to GRAPHQL_MAX_ALIASES + 1 of them), a query or a subscription one, like a document that
 * names no runnable operation. Fields under one response name run once; `__typename` runs nothing.
 */
export function requestsOf(document: DocumentNode | undefined, operationName?: unknown): number {
  const operation = document && getOperationAST(document, typeof operationName === 'string' ? operationName : undefined);
  if (operation?.operation !== 'mutation') return 1;
  const fragments = new Map(document!.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]));
  const runs = new Set(rootFields(operation.selectionSet, fragments).filter((f) => !f.name.value.startsWith('__')).map((f) => (f.alias ?? f.name).value));
  return Math.max(1, runs.size);
}
