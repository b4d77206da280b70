import type { FastifyInstance } from 'fastify';
import { KeelError } from '../platform/errors';

/** Longest request target (path and query) Keel reads; Node's own header limit (16 KiB) includes it. */
export const MAX_URL_LENGTH = 8192;

/**
 * HTTP-level refusals Fastify does not make itself: a URL over MAX_URL_LENGTH is 414 before anything
 * else runs; a body with a Content-Encoding other than identity is 415 once the caller is
 * authenticated, because Keel does not decode compressed bodies and must never read one as plain JSON.
 * Bodies are JSON only: Fastify's built-in text/plain parser is removed so such a body is 415 too.
 * An empty body sent as application/json (what curl, Postman and most SDKs send on a request
 * without one) is no body, as if none were sent; a body that is there is parsed by Fastify's own
 * JSON parser (malformed: 400; prototype poisoning refused), within BODY_LIMIT_BYTES (413).
 */
export function registerProtocolChecks(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  const { onProtoPoisoning = 'error', onConstructorPoisoning = 'error' } = app.initialConfig;
  const parseJson = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body: string, done) => {
    if (body.length === 0) return done(null, undefined);
    parseJson(request, body, done);
  });
  // Callback hooks: nothing here waits, and every request passes them.
  app.addHook('onRequest', (request, _reply, done) => {
    if ((request.raw.url ?? '').length > MAX_URL_LENGTH) {
      return done(new KeelError('BAD_REQUEST', `The URL is longer than ${MAX_URL_LENGTH} characters`, undefined, 414));
    }
    done();
  });
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const encoding = request.headers['content-encoding'];
    const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
    if (hasBody && encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      return done(new KeelError('BAD_REQUEST', 'Content-Encoding is not supported: send the body uncompressed', undefined, 415));
    }
    done(null, payload);
  });
}
