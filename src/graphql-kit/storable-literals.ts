import { GraphQLError, type ListValueNode, type ObjectValueNode, type ValidationRule } from 'graphql';
import { tooDeep, unstorable } from '../platform/storable-text';

/**
 * A document's literals that PostgreSQL could not store or Keel could not copy for a write, refused
 * before the document runs (variables are checked with the request's body):
 * - a string literal holding U+0000 or a lone surrogate: graphql-js decodes a `\u0000` or
 *   lone-surrogate escape in the document itself, after any check of the request's raw text;
 * - an object or list value nested deeper than `maxDepth` (BODY_MAX_DEPTH), counted as a variable's
 *   value is in a request's body (`{"variables": {"name": value}}`: the value at depth 3).
 */
export function storableLiterals(maxDepth: number): ValidationRule {
  return (context) => {
    let depth = 2;
    const enter = (node: ObjectValueNode | ListValueNode) => {
      if (depth < maxDepth) return void depth++;
      context.reportError(new GraphQLError(`An object or list value of the document ${tooDeep(maxDepth)}`, { nodes: [node] }));
      return false;
    };
    const leave = () => void depth--;
    return {
      StringValue(node) {
        const error = unstorable(node.value);
        if (error) context.reportError(new GraphQLError(`A string literal of the document ${error}`, { nodes: [node] }));
      },
      ObjectValue: { enter, leave },
      ListValue: { enter, leave },
    };
  };
}
