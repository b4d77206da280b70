import { ApolloArmor } from '@escape.tech/graphql-armor';
import { DocumentNode, GraphQLError, GraphQLSchema, Lexer, parse, Source, specifiedRules, TokenKind, validate, ValidationRule } from 'graphql';
import { KeelError } from '../platform/errors';

/** Tokens a document may have: far above any real query; the body size limit bounds it further. */
export const MAX_TOKENS = 20_000;

/**
 * How deep braces, brackets and parentheses may nest in a document: far past any real one (selections
 * GRAPHQL_MAX_DEPTH deep whose arguments hold values BODY_MAX_DEPTH deep), and far within what
 * graphql-js's parser and validation rules, which recurse, can follow on Node's stack (about 3,000).
 */
export const MAX_NESTING = 500;

const OPENING: ReadonlySet<string> = new Set([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING: ReadonlySet<string> = new Set([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);

/** What parsing a client's document takes: graphql-js's `noLocation` leaves out every node's `loc`, and with it the text. */
export interface ParseDocumentOptions {
  noLocation?: boolean;
}

/**
 * Parses a client's document (GraphQL over HTTP and graphql-ws), at most MAX_TOKENS tokens. Its
 * nesting is counted first by graphql-js's lexer, which does not recurse: a document nested past
 * MAX_NESTING is refused with 400 BAD_REQUEST instead of exhausting the call stack (RangeError) in
 * the parser or a validation rule. A syntax error is graphql-js's GraphQLError, as from `parse`.
 */
export function parseDocument(text: string): DocumentNode {
  return parseCountedDocument(text).document;
}

/**
 * parseDocument, also answering how many tokens the document has (comments are none): what its
 * nodes, and so its memory, grow with. A syntax error keeps its location whatever the options.
 */
export function parseCountedDocument(text: string, options: ParseDocumentOptions = {}): { document: DocumentNode; tokens: number } {
  const lexer = new Lexer(new Source(text));
  let depth = 0;
  let tokens = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF && tokens < MAX_TOKENS; token = lexer.advance(), tokens++) {
      if (OPENING.has(token.kind) && ++depth > MAX_NESTING) break;
      if (CLOSING.has(token.kind)) depth--;
    }
  } catch {
    // A syntax error before any nesting too deep: parse reports it.
  }
  if (depth > MAX_NESTING) throw new KeelError('BAD_REQUEST', `Syntax Error: Nesting limit of ${MAX_NESTING} exceeded: braces, brackets and parentheses nest deeper.`);
  return { document: parse(text, { maxTokens: MAX_TOKENS, noLocation: options.noLocation }), tokens };
}

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
