import type { GraphQLSchema } from 'graphql';
import type { Host } from '../src/platform/auth/permissions';
import { CHECKOUT_OPENAPI_PATHS } from '../src/modules/payment-links/checkout-openapi';
import type { CompiledRoute } from './compile';
import { buildOpenApi } from './openapi';
import type { RouteRow } from './route-table';
import { coreRoutes } from './routes/core';
import { orderbookRoutes } from './routes/orderbook';

export interface HostApi {
  host: Host;
  title: string;
  routes: RouteRow[];
  /** Paths of routes that run no GraphQL operation (the public checkout), documented by hand. */
  openapiPaths?: Record<string, Record<string, unknown>>;
}

/** What each host's REST API is made of besides its GraphQL schema. */
export const HOST_API: Record<Host, HostApi> = {
  core: { host: 'core', title: 'Keel core API', routes: coreRoutes, openapiPaths: CHECKOUT_OPENAPI_PATHS },
  pro: { host: 'pro', title: 'Keel order-book API', routes: orderbookRoutes },
};

/** The document a host serves at /v1/openapi.json; `maxUrlLength` is the host's URL limit (414 above it). */
export function hostOpenApi(api: HostApi, schema: GraphQLSchema, routes: CompiledRoute[], maxUrlLength: number): Record<string, unknown> {
  return buildOpenApi({ host: api.host, title: api.title, version: '1.0.0', serverUrl: '/', schema, routes, extraPaths: api.openapiPaths, maxUrlLength });
}
