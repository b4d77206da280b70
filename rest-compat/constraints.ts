import {
  ARRAY_MAX_SIZE,
  ARRAY_MIN_SIZE,
  getMetadataStorage as validationMetadata,
  IS_IN,
  IS_LENGTH,
  IS_URL,
  IS_UUID,
  MATCHES,
  MAX,
  MAX_LENGTH,
  MIN,
  MIN_LENGTH,
} from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { getMetadataStorage as graphqlMetadata } from 'type-graphql';
import { IS_DATE_RANGE_BOUND, NOT_AFTER_TO } from '../src/graphql-kit/types/date-range';

type JsonSchema = Record<string, unknown>;

/**
 * JSON Schema keywords for each class-validator check, so the OpenAPI document states exactly the
 * bounds, enums and formats the server enforces: both read the same decorators and cannot drift.
 */
const KEYWORDS: Record<string, (c: unknown[]) => JsonSchema> = {
  [MIN]: ([n]) => ({ minimum: n }),
  [MAX]: ([n]) => ({ maximum: n }),
  [IS_IN]: ([values]) => ({ enum: values }),
  [IS_LENGTH]: ([min, max]) => ({ minLength: min, ...(max === undefined ? {} : { maxLength: max }) }),
  [MIN_LENGTH]: ([n]) => ({ minLength: n }),
  [MAX_LENGTH]: ([n]) => ({ maxLength: n }),
  [ARRAY_MIN_SIZE]: ([n]) => ({ minItems: n }),
  [ARRAY_MAX_SIZE]: ([n]) => ({ maxItems: n }),
  [MATCHES]: ([pattern]) => ({ pattern: pattern instanceof RegExp ? pattern.source : String(pattern) }),
  [IS_UUID]: () => ({ format: 'uuid' }),
  // The allowed protocols (http/https, or https only) are checked by the server on top of this.
  [IS_URL]: () => ({ format: 'uri' }),
  [IS_DATE_RANGE_BOUND]: () => ({ anyOf: [{ format: 'date' }, { format: 'date-time' }] }),
};

/** Checks that say nothing a schema keyword could: presence, nesting, the order of two bounds. */
const NOT_KEYWORDS = new Set(['isOptional', 'nestedValidation', NOT_AFTER_TO]);

function nameOf(m: ValidationMetadata): string {
  if (m.type === 'conditionalValidation') return 'isOptional';
  if (m.type === 'nestedValidation') return 'nestedValidation';
  return m.name ?? m.type;
}

function metadataOf(target: Function, property: string): ValidationMetadata[] {
  return validationMetadata()
    .getTargetValidationMetadatas(target, '', true, false)
    .filter((m) => m.propertyName === property);
}

/** Every class-validator check Keel's decorators use that the document cannot state (should be none). */
export function undocumentedChecks(): string[] {
  const names = new Set<string>();
  for (const cls of [...graphqlMetadata().argumentTypes, ...graphqlMetadata().inputTypes]) {
    for (const m of validationMetadata().getTargetValidationMetadatas(cls.target, '', true, false)) names.add(nameOf(m));
  }
  return [...names].filter((n) => !(n in KEYWORDS) && !NOT_KEYWORDS.has(n));
}

/** Keywords for one property of a decorated class; `each` checks apply to an array's items. */
export function constraintsOf(target: Function, property: string): { value: JsonSchema; items: JsonSchema } {
  const value: JsonSchema = {};
  const items: JsonSchema = {};
  for (const m of metadataOf(target, property)) {
    const keywords = KEYWORDS[nameOf(m)]?.(m.constraints ?? []);
    if (keywords) Object.assign(m.each ? items : value, keywords);
  }
  return { value, items };
}

/** The @ArgsType classes behind a root field's arguments (one per resolver of that name). */
export function argsClassesOf(operation: 'query' | 'mutation', field: string): Function[] {
  const storage = graphqlMetadata();
  const resolvers = (operation === 'query' ? storage.queries : storage.mutations).filter((r) => r.schemaName === field);
  return resolvers.flatMap((r) => (r.params ?? []).filter((p) => p.kind === 'args').map((p) => (p as { getType: () => Function }).getType()));
}

/** The @InputType class of a GraphQL input type. */
export function inputClassOf(typeName: string): Function | undefined {
  return graphqlMetadata().inputTypes.find((t) => t.name === typeName)?.target;
}
