import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { KeelError } from '../platform/errors';
import type { Logger } from '../platform/logger';
import { errorEnvelope } from './error-handler';

/** What Node's HTTP parser refuses before Fastify sees a request, as the status it deserves. */
function fromParser(error: NodeJS.ErrnoException): KeelError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new KeelError('BAD_REQUEST', 'The request line and headers are larger than the server accepts', undefined, 431);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new KeelError('BAD_REQUEST', 'The request was not received in time', undefined, 408);
    default:
      return new KeelError('BAD_REQUEST', 'Malformed HTTP request');
  }
}

/**
 * Fastify's `clientErrorHandler`: Node's parser failed on the raw bytes (headers too large, a
 * malformed request line), so there is no request to answer through Fastify. The answer is still the
 * spec's error envelope with a fresh request id, and the connection is closed. Logged to Keel's logger
 * (Fastify's own is off: the host logs for itself).
 */
export function clientErrorHandler(logger: Logger) {
  return (error: NodeJS.ErrnoException, socket: Duplex): void => answerClientError(logger, error, socket);
}

function answerClientError(logger: Logger, error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const keel = fromParser(error);
  const requestId = randomUUID();
  logger.debug({ err: error, requestId }, 'client error');
  // As Node's default does: never write into a response already under way on this connection.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const body = JSON.stringify(errorEnvelope(keel, requestId));
    socket.write(
      `HTTP/1.1 ${keel.status} ${STATUS_CODES[keel.status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
