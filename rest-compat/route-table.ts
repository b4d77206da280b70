/**
 * One row per documented REST endpoint. A row is data: which GraphQL root field it runs, how the
 * request maps onto that field's arguments, and how the result is enveloped. One generic handler
 * serves every row (see handler.ts); the same rows generate the OpenAPI document (openapi.ts).
 *
 * Argument binding: path parameters bind to the argument of the same name unless `params` renames
 * them; the JSON body binds to the argument named by `body`; every other argument of the field
 * binds to the query parameter of the same name (so lists get limit/offset/filters for free).
 */
import type { ErrorCode } from '../src/platform/errors';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type Envelope =
  /** `{ data: <result> }` */
  | 'single'
  /** core list: `{ data: items, total, hasMore }` from a Page result */
  | 'coreList'
  /** order-book list: `{ data: items, meta: { total, limit, offset } }` from a Page result */
  | 'proList'
  /** `{ data: <result.data>, message: <result.message> }` */
  | 'dataWithMessage'
  /** the result as it is, for the spec's special wrappers */
  | 'raw';

export interface RouteRow {
  method: HttpMethod;
  /** The full path as the spec writes it, e.g. `/v1/api-keys/{keyId}/rotate`. */
  path: string;
  /** The GraphQL root field it runs: a Query field for GET, a Mutation field otherwise. */
  field: string;
  /** Path parameter -> argument name, where they differ. */
  params?: Record<string, string>;
  /** The argument that receives the JSON body. */
  body?: string;
  envelope: Envelope;
  /** Success status; 200 when absent. */
  status?: number;
  summary: string;
  tag: string;
  /** The route-only error codes it sends (ERROR_CODE_DOCS' `routeOnly`): its error responses document them. */
  errors?: ErrorCode[];
  /** The OpenAPI operationId, where `<method>_<field>` would repeat another row's: an alias path of the same operation. */
  operationId?: string;
}
