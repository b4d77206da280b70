import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Principal } from '../platform/auth/principal';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    /** The spent monthly quota's refusal of a GraphQL request, given unless it only reads the usage. */
    quotaRefusal?: Error;
    idempotencyKey?: string;
    /** A GraphQL answer (200) carries an error REST would answer 5xx: for idempotency it is one. */
    answeredServerError?: boolean;
    /** Set while a keyed request's unit-of-work scope is open; closes it. */
    closeUnitOfWorkScope?: () => void;
  }
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** Echo a well-formed client X-Request-Id; otherwise mint one. */
export function requestIdFor(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID();
}

export function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The token of an `Authorization: Bearer <token>` header; undefined when there is none or another scheme. */
export function bearerToken(value: string | string[] | undefined): string | undefined {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header(value) ?? '');
  return m ? m[1] : undefined;
}
