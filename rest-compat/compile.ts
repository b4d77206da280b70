import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import {
  astFromValue,
  DocumentNode,
  print,
  getNamedType,
  GraphQLArgument,
  GraphQLField,
  GraphQLInputType,
  GraphQLOutputType,
  GraphQLSchema,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  parse,
  validate,
} from 'graphql';
import { FieldError, KeelError } from '../src/platform/errors';
import { SchemaConverter } from './json-schema';
import { checkQueryParameters } from './query-parameters';
import type { RouteRow } from './route-table';

export interface CompiledRoute {
  row: RouteRow;
  operation: 'query' | 'mutation';
  document: DocumentNode;
  /** The GraphQL field being run, for documentation. */
  fieldDef: GraphQLField<unknown, unknown>;
  pathArgs: { param: string; arg: GraphQLArgument }[];
  queryArgs: GraphQLArgument[];
  bodyArg?: GraphQLArgument;
  /** Builds the operation's variables from a request, or throws a 4xx KeelError. */
  variables(req: { params: Record<string, string>; query: Record<string, unknown>; body: unknown }): Record<string, unknown>;
}

const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false });
addFormats(ajv);
const MAX_SELECTION_DEPTH = 5;

/** Every field of a type, recursively, so a REST response carries the whole resource. */
export function fullSelection(type: GraphQLOutputType, depth = 0, seen: string[] = []): string {
  const named = getNamedType(type);
  if (!isObjectType(named)) return '';
  if (depth >= MAX_SELECTION_DEPTH || seen.includes(named.name)) return '{ __typename }';
  const parts: string[] = [];
  for (const field of Object.values(named.getFields())) {
    if (field.args.some((a) => isNonNullType(a.type))) continue;
    const inner = getNamedType(field.type);
    if (isObjectType(inner)) parts.push(`${field.name} ${fullSelection(field.type, depth + 1, [...seen, named.name])}`);
    else parts.push(field.name);
  }
  return `{ ${parts.join(' ')} }`;
}

function ajvFields(errors: ErrorObject[] | null | undefined, prefix: string): FieldError[] {
  const out: FieldError[] = [];
  for (const e of errors ?? []) {
    const base = [prefix, e.instancePath.replace(/^\//, '').replace(/\//g, '.')].filter(Boolean).join('.');
    if (e.keyword === 'required') out.push({ field: [base, e.params.missingProperty].filter(Boolean).join('.'), error: 'is required' });
    else if (e.keyword === 'additionalProperties') out.push({ field: [base, e.params.additionalProperty].filter(Boolean).join('.'), error: 'is not a known field' });
    else if (e.keyword === 'anyOf' || (e.keyword === 'type' && out.some((f) => f.field === (base || 'body')))) continue;
    else out.push({ field: base || 'body', error: e.message ?? 'is invalid' });
  }
  return out;
}

/** Turns a query-string value into the argument's GraphQL input type. */
function coerceQueryValue(name: string, raw: unknown, type: GraphQLInputType): unknown {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isListType(inner)) {
    return String(raw).split(',').filter((s) => s !== '').map((p) => coerceQueryValue(name, p, inner.ofType));
  }
  const text = String(raw);
  if (isScalarType(inner)) {
    switch (inner.name) {
      case 'Int': {
        const n = Number(text);
        if (!/^-?\d{1,10}$/.test(text) || n !== (n | 0)) throw KeelError.invalidField(name, 'must be a 32-bit integer');
        return n;
      }
      case 'Float': {
        const n = Number(text);
        if (text.trim() === '' || !Number.isFinite(n)) throw KeelError.invalidField(name, 'must be a number');
        return n;
      }
      case 'Boolean':
        if (text === 'true') return true;
        if (text === 'false') return false;
        throw KeelError.invalidField(name, 'must be true or false');
      default:
        return text;
    }
  }
  if (isEnumType(inner)) {
    if (!inner.getValues().some((v) => v.name === text)) {
      throw KeelError.invalidField(name, `must be one of ${inner.getValues().map((v) => v.name).join(', ')}`);
    }
    return text;
  }
  throw KeelError.invalidField(name, 'cannot be given in the query string');
}

function toGraphQLPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

export function compileRoute(schema: GraphQLSchema, row: RouteRow): CompiledRoute {
  const operation = row.method === 'GET' ? 'query' : 'mutation';
  const root = operation === 'query' ? schema.getQueryType() : schema.getMutationType();
  const fieldDef = root?.getFields()[row.field];
  if (!fieldDef) throw new Error(`Route ${row.method} ${row.path}: no ${operation} field '${row.field}'`);
  const argByName = new Map(fieldDef.args.map((a) => [a.name, a]));

  const pathParams = [...row.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const pathArgs = pathParams.map((param) => {
    const arg = argByName.get(row.params?.[param] ?? param);
    if (!arg) throw new Error(`Route ${row.method} ${row.path}: path parameter '${param}' matches no argument of ${row.field}`);
    return { param, arg };
  });
  const bodyArg = row.body ? argByName.get(row.body) : undefined;
  if (row.body && !bodyArg) throw new Error(`Route ${row.method} ${row.path}: body argument '${row.body}' not found`);
  const bound = new Set([...pathArgs.map((p) => p.arg.name), ...(bodyArg ? [bodyArg.name] : [])]);
  const queryArgs = fieldDef.args.filter((a) => !bound.has(a.name));
  const queryNames = new Set(queryArgs.map((a) => a.name));

  const varDefs = fieldDef.args
    .map((a) => {
      const defaultValue = a.defaultValue === undefined ? undefined : astFromValue(a.defaultValue, a.type);
      return `$${a.name}: ${String(a.type)}${defaultValue ? ` = ${print(defaultValue)}` : ''}`;
    })
    .join(', ');
  const argList = fieldDef.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  const source = `${operation} Rest${varDefs ? `(${varDefs})` : ''} { ${row.field}${argList ? `(${argList})` : ''} ${fullSelection(fieldDef.type)} }`;
  const document = parse(source);
  const problems = validate(schema, document);
  if (problems.length) throw new Error(`Route ${row.method} ${row.path}: ${problems.map((p) => p.message).join('; ')}`);

  let validateBody: ValidateFunction | undefined;
  if (bodyArg) validateBody = ajv.compile(new SchemaConverter().input(bodyArg.type));

  return {
    row,
    operation,
    document,
    fieldDef,
    pathArgs,
    queryArgs,
    bodyArg,
    variables(req) {
      checkQueryParameters(req.query, queryNames);
      const vars: Record<string, unknown> = {};
      for (const { param, arg } of pathArgs) vars[arg.name] = coerceQueryValue(param, req.params[param], arg.type);
      const fieldErrors: FieldError[] = [];
      for (const arg of queryArgs) {
        const raw = req.query[arg.name];
        if (raw === undefined || raw === '') continue;
        try {
          vars[arg.name] = coerceQueryValue(arg.name, raw, arg.type);
        } catch (e) {
          if (e instanceof KeelError && e.details?.fields) fieldErrors.push(...(e.details.fields as FieldError[]));
          else throw e;
        }
      }
      if (fieldErrors.length) throw KeelError.validation(fieldErrors);
      if (bodyArg && validateBody) {
        const body = req.body === undefined || req.body === null ? (isNonNullType(bodyArg.type) ? {} : null) : req.body;
        if (body !== null && (typeof body !== 'object' || Array.isArray(body))) throw new KeelError('BAD_REQUEST', 'The request body must be a JSON object');
        if (!validateBody(body)) throw KeelError.validation(ajvFields(validateBody.errors, ''));
        vars[bodyArg.name] = body;
      }
      return vars;
    },
  };
}

export { toGraphQLPath };
