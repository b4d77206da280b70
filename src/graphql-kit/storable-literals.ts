import { GraphQLError, type ValidationRule } from 'graphql';
import { unstorable } from '../platform/storable-text';

/**
 * A string literal of a document that PostgreSQL could not store: graphql-js decodes a `\u0000` or
 * lone-surrogate escape in the document itself, after any check of the request's raw text, so the
 * document is refused before it runs (variables are checked with the request's body).
 */
export const storableStringLiterals: ValidationRule = (context) => ({
  StringValue(node) {
    const error = unstorable(node.value);
    if (error) context.reportError(new GraphQLError(`A string literal of the document ${error}`, { nodes: [node] }));
  },
});
