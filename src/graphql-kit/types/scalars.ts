import { GraphQLScalarType, Kind } from 'graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { DECIMAL_STRING } from '../../platform/decimal';

/** Money and prices: decimal strings at the edge, never floats. */
export const Decimal = new GraphQLScalarType<string, string>({
  name: 'Decimal',
  description: 'A decimal number as a string, e.g. "12.50". Never a float.',
  serialize: (v) => String(v),
  parseValue: (v) => {
    if (typeof v !== 'string' || !DECIMAL_STRING.test(v)) throw new TypeError('must be a decimal string such as "12.50"');
    return v;
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING || !DECIMAL_STRING.test(ast.value)) throw new TypeError('must be a decimal string such as "12.50"');
    return ast.value;
  },
});

export const JSONObject = GraphQLJSONObject;
