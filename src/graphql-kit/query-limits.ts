import { ApolloArmor } from '@escape.tech/graphql-armor';
import { DocumentNode, GraphQLError, GraphQLSchema, specifiedRules, validate, ValidationRule } from 'graphql';

/** Tokens a document may have: far above any real query; the body size limit bounds it further. */
export const MAX_TOKENS = 20_000;

export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxCost: number;
}

/**
 * What one GraphQL document may ask for, checked before it runs (graphql-armor): nesting depth,
 * aliases, and a cost that grows with every field and object selected. Without them one query,
 * counted once by the rate limit (a mutation counts once per root field: `requestsOf`), could ask
 * for the same list thousands of times under aliases.
 * The same rules serve GraphQL over HTTP and over graphql-ws; the REST shim runs its own fixed
 * documents and is not limited by them.
 */
export function queryLimitRules(limits: QueryLimits): ValidationRule[] {
  return new ApolloArmor({
    maxDepth: { n: limits.maxDepth },
    maxAliases: { n: limits.maxAliases },
    costLimit: { maxCost: limits.maxCost },
    maxTokens: { n: MAX_TOKENS },
    maxDirectives: { n: 50 },
    // Introspection may be off in production; error messages must not list field names instead.
    blockFieldSuggestion: { enabled: true },
  }).protect().validationRules;
}

/** graphql-js validation with the query limits added, for servers that take a validate function. */
export function validateWithLimits(rules: ValidationRule[]) {
  return (schema: GraphQLSchema, document: DocumentNode): readonly GraphQLError[] => validate(schema, document, [...specifiedRules, ...rules]);
}
