import type { FastifyInstance } from 'fastify';
import { KeelError } from '../platform/errors';
import { sendError } from './error-handler';

/** How long a client refused by a closing host is told to wait before sending the request again. */
const RETRY_AFTER_SECONDS = 1;

/**
 * Once the host starts closing, a request still arriving on an open connection (pipelined, or on a
 * kept-alive one) is answered 503 SERVICE_UNAVAILABLE in the error envelope (GraphQL's shape on
 * /graphql), with Retry-After, and its connection closed: the client sends it again, to another
 * node. Registered before every other hook but CORS's (headers only), so nothing else runs for it. (Fastify's own answer,
 * return503OnClosing, is a body of its own with no request id.)
 */
export function registerClosingRefusal(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!closing) return done();
    const error = new KeelError('SERVICE_UNAVAILABLE', 'This node is shutting down; send the request again');
    error.retryAfterSeconds = RETRY_AFTER_SECONDS;
    sendError(request, reply.header('Connection', 'close'), error);
  });
}
