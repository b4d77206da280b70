import createClient, { type Client } from 'openapi-fetch';
import type { paths as CorePaths } from './generated/core';
import type { paths as ProPaths } from './generated/pro';
import { idempotencyKeys } from './idempotency';
import { retryingFetch, RetryOptions } from './retry';

export type CoreClient = Client<CorePaths>;
export type ProClient = Client<ProPaths>;

export interface KeelClientOptions {
  /** The host's base URL, e.g. http://localhost:4000 (core) or http://localhost:4001 (order book). */
  baseUrl: string;
  /** An API key of this host with its organisation id, or a short-lived access token (Authorization: Bearer). */
  apiKey?: string;
  orgId?: string;
  token?: string;
  retry?: RetryOptions;
  /** The transport under the retries (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent on every request. */
  headers?: Record<string, string>;
}

function clientOptions(options: KeelClientOptions) {
  const credentials: Record<string, string> = options.token
    ? { Authorization: `Bearer ${options.token}` }
    : { ...(options.apiKey ? { apiKey: options.apiKey } : {}), ...(options.orgId ? { orgId: options.orgId } : {}) };
  return { baseUrl: options.baseUrl.replace(/\/+$/, ''), headers: { ...options.headers, ...credentials }, fetch: retryingFetch(options.retry, options.fetch) };
}

function keelClient<Paths extends {}>(options: KeelClientOptions): Client<Paths> {
  const client = createClient<Paths>(clientOptions(options));
  client.use(idempotencyKeys());
  return client;
}

/** A typed client of the core host (wallets, transfers, payments, webhooks, …): writes idempotent, refusals retried. */
export const createCoreClient = (options: KeelClientOptions): CoreClient => keelClient<CorePaths>(options);

/** A typed client of the order-book host (markets, orders, realtime authorisation, …). */
export const createProClient = (options: KeelClientOptions): ProClient => keelClient<ProPaths>(options);
