import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isKeelError, KeelError } from '../platform/errors';
import { RateLimitExceeded } from '../platform/rate-limit';
import { errorExtensions } from '../graphql-kit/errors';
import { unavailableError } from '../platform/unavailable';
import { setRateLimitHeaders } from './rate-limit-headers';
import { QuotaExceeded } from '../platform/quota/monthly-quota';
import { setQuotaHeaders } from './quota-headers';
import type { Logger } from '../platform/logger';

/** Fastify's own failures (body parsing, size, media type) in the spec's vocabulary. */
function fromFastify(error: FastifyError): KeelError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new KeelError('BAD_REQUEST', 'The request body is not valid JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new KeelError('BAD_REQUEST', 'The request body is too large', undefined, 413);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new KeelError('BAD_REQUEST', 'Unsupported Content-Type; send application/json', undefined, 415);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new KeelError('BAD_REQUEST', 'Content-Length does not match the body');
    default:
      if (error instanceof SyntaxError || (error.statusCode && error.statusCode >= 400 && error.statusCode < 500)) {
        return new KeelError('BAD_REQUEST', 'Malformed request', undefined, error.statusCode ?? 400);
      }
      return undefined;
  }
}

export function isGraphQLPath(url: string): boolean {
  return url === '/graphql' || url.startsWith('/graphql?');
}

/** REST gets the spec's envelope; GraphQL clients get `errors[].extensions` with the same code. */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: KeelError): FastifyReply {
  if (error instanceof RateLimitExceeded) setRateLimitHeaders(reply, error.state);
  if (error instanceof QuotaExceeded) setQuotaHeaders(reply, error.state);
  if (error.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.retryAfterSeconds));
  reply.code(error.status);
  // Errors raised before the guards run (414, framework errors) carry the id too.
  reply.header('X-Request-Id', request.id);
  if (isGraphQLPath(request.url)) {
    return reply.send({ errors: [{ message: error.message, extensions: errorExtensions(error, request.id) }] });
  }
  return reply.send(errorEnvelope(error, request.id));
}

/** The spec's REST error envelope. */
export function errorEnvelope(error: Pick<KeelError, 'code' | 'message' | 'details'>, requestId: string): { error: Record<string, unknown> } {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
      timestamp: new Date().toISOString(),
      requestId,
    },
  };
}

export function errorHandler(logger: Logger) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const known = isKeelError(error) ? error : (unavailableError(error) ?? fromFastify(error));
    if (known) return sendError(request, reply, known);
    logger.error({ err: error, requestId: request.id, url: request.routeOptions?.url }, 'unhandled error');
    return sendError(request, reply, new KeelError('INTERNAL_ERROR', 'Internal error; quote the requestId when contacting support'));
  };
}
