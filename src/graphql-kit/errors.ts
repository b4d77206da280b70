import { GraphQLError } from 'graphql';
import { ValidationError } from 'class-validator';
import { ArgumentValidationError } from 'type-graphql';
import { FieldError, isKeelError, KeelError } from '../platform/errors';
import { unavailableError } from '../platform/unavailable';
import { nodeUnanswered } from '../platform/chain-port/evm-transactions';

/** Flattens class-validator errors into the spec's `details.fields` list. */
function fieldsFromValidation(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const e of errors) {
    const field = parent ? `${parent}.${e.property}` : e.property;
    for (const message of Object.values(e.constraints ?? {})) out.push({ field, error: message });
    if (e.children?.length) out.push(...fieldsFromValidation(e.children, field));
  }
  return out;
}

const COERCION = /^Variable "\$(\w+)" got invalid value .*? at "([^"]+)"; (.*)$/s;
const MISSING = /^Variable "\$(\w+)" got invalid value .*?; Field "(\w+)" of required type "[^"]+" was not provided\.$/s;
const UNKNOWN = /^Variable "\$(\w+)" got invalid value .*?; Field "(\w+)" is not defined by type "[^"]+"\.$/s;
const MISSING_VAR = /^Variable "\$(\w+)" of required type "[^"]+" was not provided\.$/;

/** Strips the variable name a REST body is bound to, so fields read as the body's own paths. */
function fieldPath(variable: string, path: string): string {
  return path.replace(new RegExp(`^${variable}\\.?`), '') || variable;
}

/** Reads graphql-js's variable-coercion messages into field errors. */
function fieldsFromCoercion(message: string): FieldError[] | undefined {
  let m = MISSING.exec(message);
  if (m) return [{ field: m[2], error: 'is required' }];
  m = UNKNOWN.exec(message);
  if (m) return [{ field: m[2], error: 'is not a known field' }];
  m = COERCION.exec(message);
  if (m) return [{ field: fieldPath(m[1], m[2]), error: m[3] }];
  m = MISSING_VAR.exec(message);
  if (m) return [{ field: m[1], error: 'is required' }];
  return undefined;
}

/** Maps anything thrown while executing an operation onto the one error type. */
export function toKeelError(error: unknown): KeelError {
  let current: unknown = error;
  while (current instanceof GraphQLError && current.originalError && !(current instanceof ArgumentValidationError)) {
    current = current.originalError;
  }
  if (isKeelError(current)) return current;
  if (current instanceof ArgumentValidationError) {
    return KeelError.validation(fieldsFromValidation(current.extensions.validationErrors));
  }
  if (current instanceof GraphQLError) {
    const fields = fieldsFromCoercion(current.message);
    if (fields) return KeelError.validation(fields);
    if (current.extensions?.code === 'GRAPHQL_PARSE_FAILED' || current.extensions?.code === 'GRAPHQL_VALIDATION_FAILED' || !current.originalError) {
      return new KeelError('BAD_REQUEST', current.message);
    }
  }
  if (nodeUnanswered(current)) return new KeelError('UPSTREAM_ERROR', "A chain's node did not answer; try again shortly");
  return unavailableError(current) ?? new KeelError('INTERNAL_ERROR', 'Internal error');
}

/** The `extensions` a GraphQL client sees: the spec's code plus details and the request id. */
export function errorExtensions(error: KeelError, requestId: string): Record<string, unknown> {
  return { code: error.code, status: error.status, ...(error.details ? { details: error.details } : {}), requestId };
}

/** Wraps anything thrown before execution (a KeelError most often) so GraphQL servers can send it. */
export function asGraphQLError(error: unknown): GraphQLError {
  if (error instanceof GraphQLError) return error;
  const original = error instanceof Error ? error : new Error(String(error));
  return new GraphQLError(original.message, { originalError: original });
}
