import type { Middleware } from 'openapi-fetch';
import { isWrite } from './retry';

/**
 * Gives every write (POST, PUT, PATCH, DELETE) an Idempotency-Key unless the caller set one, before
 * the first attempt, so its retries carry the same key. Pass your own key (a header on the call) to
 * make a retry across processes, e.g. after a crash, land on the same work.
 */
export function idempotencyKeys(newKey: () => string = () => crypto.randomUUID()): Middleware {
  return {
    onRequest({ request }) {
      if (isWrite(request.method) && !request.headers.has('idempotency-key')) request.headers.set('Idempotency-Key', newKey());
      return request;
    },
  };
}
