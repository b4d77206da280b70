import {
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInputType,
  GraphQLList,
  GraphQLNamedType,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLOutputType,
  GraphQLScalarType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from 'graphql';

import { constraintsOf, inputClassOf } from './constraints';
import { DECIMAL_STRING } from '../src/platform/decimal';

export type JsonSchema = Record<string, unknown>;

const DECIMAL_PATTERN = DECIMAL_STRING.source;

function scalarSchema(type: GraphQLScalarType): JsonSchema {
  switch (type.name) {
    case 'String':
    case 'ID':
      return { type: 'string' };
    case 'Int':
      return { type: 'integer', minimum: -2147483648, maximum: 2147483647 };
    case 'Float':
      return { type: 'number' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'Decimal':
      return { type: 'string', pattern: DECIMAL_PATTERN, description: 'decimal string' };
    case 'DateTimeISO':
    case 'DateTime':
      return { type: 'string', format: 'date-time' };
    case 'JSONObject':
      return { type: 'object' };
    default:
      return {};
  }
}

function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'] };
  if (schema.$ref) return { anyOf: [schema, { type: 'null' }] };
  if (Array.isArray(schema.enum)) return { ...schema, enum: [...schema.enum, null] };
  return schema;
}

/** A schema with the class-validator checks of its property added; `items` go to an array's items. */
export function withChecks(schema: JsonSchema, checks: { value: JsonSchema; items: JsonSchema }): JsonSchema {
  const out = { ...schema, ...checks.value };
  if (Object.keys(checks.items).length && out.items) out.items = { ...(out.items as JsonSchema), ...checks.items };
  return out;
}

/**
 * JSON Schema for GraphQL types: request bodies are validated against it before a GraphQL
 * operation runs (so errors name the body's own fields), and the OpenAPI document is built from it.
 * `refs` collects named object, input and enum types for `components.schemas`. With `documentChecks`
 * (the OpenAPI document) input fields also state their class-validator checks and defaults; bodies
 * are checked against those by class-validator itself, in the operation.
 */
export class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};

  constructor(private readonly options: { documentChecks?: boolean } = {}) {}

  private readonly refPrefix = '#/components/schemas/';

  /** Inline schema (no $ref) for validating a value of an input type. */
  input(type: GraphQLInputType): JsonSchema {
    if (isNonNullType(type)) return this.inputNonNull(type.ofType);
    return nullable(this.inputNonNull(type));
  }

  private inputNonNull(type: GraphQLInputType): JsonSchema {
    if (isNonNullType(type)) return this.inputNonNull(type.ofType);
    if (isListType(type)) return { type: 'array', items: this.input((type as GraphQLList<GraphQLInputType>).ofType) };
    if (isScalarType(type)) return scalarSchema(type);
    if (isEnumType(type)) return this.enumSchema(type);
    const obj = type as GraphQLInputObjectType;
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    const decorated = this.options.documentChecks ? inputClassOf(obj.name) : undefined;
    for (const field of Object.values(obj.getFields())) {
      const schema = decorated ? withChecks(this.input(field.type), constraintsOf(decorated, field.name)) : this.input(field.type);
      properties[field.name] = {
        ...schema,
        ...(this.options.documentChecks && field.defaultValue !== undefined ? { default: field.defaultValue } : {}),
        ...(field.description ? { description: field.description } : {}),
      };
      if (isNonNullType(field.type) && field.defaultValue === undefined) required.push(field.name);
    }
    return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
  }

  private enumSchema(type: GraphQLEnumType): JsonSchema {
    return { type: 'string', enum: type.getValues().map((v) => v.name) };
  }

  /** A schema with $refs for response documentation. */
  output(type: GraphQLOutputType): JsonSchema {
    if (isNonNullType(type)) return this.outputNonNull((type as GraphQLNonNull<GraphQLOutputType>).ofType);
    return nullable(this.outputNonNull(type));
  }

  private outputNonNull(type: GraphQLOutputType): JsonSchema {
    if (isListType(type)) return { type: 'array', items: this.output((type as GraphQLList<GraphQLOutputType>).ofType) };
    if (isScalarType(type)) return scalarSchema(type);
    if (isEnumType(type)) return this.ref(type, () => this.enumSchema(type));
    if (isObjectType(type)) return this.ref(type, () => this.objectSchema(type));
    return {};
  }

  /** The input type as a named component, for request bodies. */
  inputRef(type: GraphQLInputType): JsonSchema {
    const named = isNonNullType(type) ? type.ofType : type;
    if (isInputObjectType(named)) return this.ref(named, () => this.inputNonNull(named));
    return this.input(type);
  }

  objectSchema(type: GraphQLObjectType): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const field of Object.values(type.getFields())) {
      if (field.args.some((a) => isNonNullType(a.type))) continue;
      properties[field.name] = { ...this.output(field.type), ...(field.description ? { description: field.description } : {}) };
      if (isNonNullType(field.type)) required.push(field.name);
    }
    return { type: 'object', ...(type.description ? { description: type.description } : {}), properties, required };
  }

  private ref(type: GraphQLNamedType, build: () => JsonSchema): JsonSchema {
    if (!this.components[type.name]) {
      this.components[type.name] = {};
      this.components[type.name] = build();
    }
    return { $ref: `${this.refPrefix}${type.name}` };
  }
}
