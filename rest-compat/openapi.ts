import { GraphQLArgument, GraphQLSchema, isNonNullType } from 'graphql';
import type { CompiledRoute } from './compile';
import { argsClassesOf, constraintsOf } from './constraints';
import { JsonSchema, SchemaConverter, withChecks } from './json-schema';
import type { Envelope } from './route-table';
import type { Host } from '../src/platform/auth/permissions';
import type { ErrorCode } from '../src/platform/errors';
import { KEY_MAX_LENGTH, KEY_PATTERN } from '../src/platform/idempotency';
import { codesOf, describeCodes, statusesOf } from './error-codes';

/**
 * Refusals of the HTTP layer, in the envelope with code BAD_REQUEST and their own status; the URL
 * limit is the host's (its protocol checks enforce it).
 */
const httpRefusals = (maxUrlLength: number): Record<string, string> => ({
  '413': 'Body over the size limit (BAD_REQUEST)',
  '414': `URL over ${maxUrlLength} characters (BAD_REQUEST)`,
  '415': 'A body that is not application/json, or has a Content-Encoding other than identity: bodies are sent uncompressed (BAD_REQUEST)',
  '431': 'Request line and headers over 16 KiB (BAD_REQUEST)',
});

/**
 * The error responses an operation of `host` documents: each status ERROR_STATUS gives a code the
 * host sends, described by its codes (ERROR_CODE_DOCS; for an operation, `named` its route row's
 * own codes), and the HTTP layer's refusals.
 */
function errorResponses(host: Host, maxUrlLength: number, named?: readonly ErrorCode[]): Record<string, string> {
  const described = statusesOf(host).map((status) => [String(status), describeCodes(codesOf(host, status, named))]);
  return Object.fromEntries([...described, ...Object.entries(httpRefusals(maxUrlLength))].sort(([a], [b]) => Number(a) - Number(b)));
}

const integer = { type: 'integer' };

/** Headers of every authenticated answer: the key's tightest rate-limit window and the organisation's monthly quota. */
const LIMIT_HEADERS: Record<string, { description: string; schema: Record<string, string> }> = {
  'X-RateLimit-Limit': { description: "Requests allowed in the key's rate-limit window with the fewest left (per second, minute or day)", schema: integer },
  'X-RateLimit-Remaining': { description: 'Requests left in that window', schema: integer },
  'X-RateLimit-Reset': { description: 'When that window resets, UTC epoch seconds', schema: integer },
  'X-Quota-Limit': {
    description: "The organisation's monthly request quota, shared by all its keys on both hosts (absent while Keel cannot reach Redis or PostgreSQL to count it; such requests are served)",
    schema: integer,
  },
  'X-Quota-Remaining': { description: 'Requests left this UTC calendar month', schema: integer },
  'X-Quota-Reset': { description: "When the quota resets, the next month's first instant, UTC epoch seconds", schema: integer },
};
/** Headers of a transient refusal (a 429, a transient 409) besides those: when to send the request again. */
const REFUSAL_HEADERS: Record<string, { description: string; schema: Record<string, unknown> }> = {
  'Retry-After': {
    description:
      'Whole seconds to wait before sending the request again (at least 1): until the exceeded rate-limit window resets (RATE_LIMIT_EXCEEDED), until the monthly quota resets (QUOTA_EXCEEDED), until a leader may take the request (NOT_LEADER), or until the request still running under the same Idempotency-Key may have finished (CONFLICT with details.reason IDEMPOTENCY_KEY_IN_PROGRESS); a 409 without it is not transient',
    schema: { type: 'integer', minimum: 1 },
  },
};
const headerRefs = (headers: object) => Object.fromEntries(Object.keys(headers).map((name) => [name, { $ref: `#/components/headers/${name}` }]));
const limitHeaderRefs = headerRefs(LIMIT_HEADERS);

function envelopeSchema(kind: Envelope, result: JsonSchema, itemsOf: (s: JsonSchema) => JsonSchema): JsonSchema {
  switch (kind) {
    case 'single':
      return { type: 'object', properties: { data: result }, required: ['data'] };
    case 'coreList':
      return { type: 'object', properties: { data: itemsOf(result), total: { type: 'integer' }, hasMore: { type: 'boolean' } }, required: ['data', 'total', 'hasMore'] };
    case 'proList':
      return { type: 'object', properties: { data: itemsOf(result), meta: { $ref: '#/components/schemas/PageMeta' } }, required: ['data', 'meta'] };
    default:
      return result;
  }
}

/** A query argument's schema with the checks its @ArgsType class declares for it. */
function argumentSchema(converter: SchemaConverter, route: CompiledRoute, arg: GraphQLArgument): JsonSchema {
  return argsClassesOf(route.operation, route.row.field).reduce((schema, cls) => withChecks(schema, constraintsOf(cls, arg.name)), converter.input(arg.type));
}

/** OpenAPI 3.1, generated from the same route rows and GraphQL schema that serve the requests. */
export function buildOpenApi(opts: {
  /** The host serving the document: which error codes its answers carry. */
  host: Host;
  title: string;
  version: string;
  serverUrl: string;
  schema: GraphQLSchema;
  routes: CompiledRoute[];
  /** Paths of routes that run no GraphQL operation (the public checkout), documented by hand. */
  extraPaths?: Record<string, Record<string, unknown>>;
  /** The longest request target the host reads (414 above it). */
  maxUrlLength: number;
}): Record<string, unknown> {
  const errors = errorResponses(opts.host, opts.maxUrlLength);
  const converter = new SchemaConverter({ documentChecks: true });
  const paths: Record<string, Record<string, unknown>> = { ...opts.extraPaths };
  for (const route of opts.routes) {
    const { row, fieldDef } = route;
    const result = converter.output(fieldDef.type);
    const itemsOf = (s: JsonSchema): JsonSchema => {
      const name = String(s.$ref ?? '').split('/').pop() ?? '';
      const page = converter.components[name] as { properties?: Record<string, JsonSchema> } | undefined;
      return page?.properties?.items ?? { type: 'array' };
    };
    const parameters = [
      ...route.pathArgs.map(({ param, arg }) => ({ name: param, in: 'path', required: true, schema: argumentSchema(converter, route, arg), description: arg.description ?? undefined })),
      ...route.queryArgs.map((arg) => ({
        name: arg.name,
        in: 'query',
        required: isNonNullType(arg.type) && arg.defaultValue === undefined,
        schema: { ...argumentSchema(converter, route, arg), ...(arg.defaultValue !== undefined ? { default: arg.defaultValue } : {}) },
        description: arg.description ?? undefined,
      })),
    ];
    const status = String(row.status ?? 200);
    paths[row.path] ??= {};
    paths[row.path][row.method.toLowerCase()] = {
      operationId: row.operationId ?? `${row.method.toLowerCase()}_${row.field}`,
      summary: row.summary,
      description: fieldDef.description ?? undefined,
      tags: [row.tag],
      'x-graphql-field': `${route.operation === 'query' ? 'Query' : 'Mutation'}.${row.field}`,
      parameters: [...parameters, ...(row.method === 'GET' ? [] : [{ $ref: '#/components/parameters/IdempotencyKey' }])],
      ...(route.bodyArg
        ? { requestBody: { required: isNonNullType(route.bodyArg.type), content: { 'application/json': { schema: converter.inputRef(route.bodyArg.type) } } } }
        : {}),
      responses: {
        [status]: { description: 'Success', headers: limitHeaderRefs, content: { 'application/json': { schema: envelopeSchema(row.envelope, result, itemsOf) } } },
        ...Object.fromEntries(Object.entries(errorResponses(opts.host, opts.maxUrlLength, row.errors ?? [])).map(([code, description]) => [code, { $ref: `#/components/responses/E${code}`, description }])),
      },
    };
  }
  return withoutUnusedComponents({
    openapi: '3.1.0',
    info: { title: opts.title, version: opts.version, license: { name: 'Apache 2.0', identifier: 'Apache-2.0' } },
    servers: [{ url: opts.serverUrl }],
    // Either the key's headers, or a short-lived access token the key issued.
    security: [{ apiKey: [], orgId: [] }, { bearerToken: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'apiKey' },
        orgId: { type: 'apiKey', in: 'header', name: 'orgId', description: 'Organisation id (appId is accepted as the same thing)' },
        bearerToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: "A short-lived access token issued by a key of this host (POST /v1/tokens, POST /v1/orderbook/tokens, POST /v1/orderbook/realtime/auth), carrying the organisation and at most the key's scopes" },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          // What the server takes (1 to 255 printable ASCII characters), stated from its own check.
          schema: { type: 'string', minLength: 1, maxLength: KEY_MAX_LENGTH, pattern: KEY_PATTERN.source },
          description:
            `1 to ${KEY_MAX_LENGTH} printable ASCII characters, no space (a UUID v4 is recommended); another value is 422 INVALID_FIELD naming Idempotency-Key. Replays the first response (200, Idempotent-Replayed: true) for 24 hours. The work commits together with its record under this key, so a retry after a crash, a timeout or a 5xx gets the committed result and the work is never done twice. The same key with another method, path or body is 422 VALIDATION_ERROR, details.fields naming Idempotency-Key; a repeat while the first still runs is 409 CONFLICT with details.reason IDEMPOTENCY_KEY_IN_PROGRESS and Retry-After: send it again, with the same key, after Retry-After`,
        },
      },
      headers: { ...LIMIT_HEADERS, ...REFUSAL_HEADERS },
      responses: Object.fromEntries(
        Object.entries(errors).map(([code, description]) => [
          `E${code}`,
          {
            description,
            ...(code === '429' ? { headers: { ...limitHeaderRefs, ...headerRefs(REFUSAL_HEADERS) } } : code === '409' ? { headers: headerRefs(REFUSAL_HEADERS) } : {}),
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
          },
        ]),
      ),
      schemas: {
        ...converter.components,
        PageMeta: { type: 'object', properties: { total: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' } }, required: ['total', 'limit', 'offset'] },
        ErrorEnvelope: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message', 'timestamp', 'requestId'],
              properties: {
                code: { type: 'string' },
                message: { type: 'string' },
                details: { type: 'object', description: "What the code's description names: details.fields of a validation error, the limits of a 429, details.reason IDEMPOTENCY_KEY_IN_PROGRESS of a transient 409 CONFLICT" },
                timestamp: { type: 'string', format: 'date-time' },
                requestId: { type: 'string' },
              },
            },
          },
        },
      },
    },
  });
}

/**
 * The document without the components nothing reaches from its paths: the converter registers
 * every type it meets (list pages among them, whose items the envelopes inline).
 */
function withoutUnusedComponents(doc: Record<string, unknown> & { components: Record<string, Record<string, unknown>> }): Record<string, unknown> {
  const { components } = doc;
  const used = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && !used.has(value)) {
        used.add(value);
        const [, , section, name] = value.split('/');
        visit(components[section]?.[name]);
      } else visit(value);
    }
  };
  visit(doc.paths);
  for (const [section, entries] of Object.entries(components)) {
    if (section === 'securitySchemes') continue;
    components[section] = Object.fromEntries(Object.entries(entries).filter(([name]) => used.has(`#/components/${section}/${name}`)));
  }
  return doc;
}
