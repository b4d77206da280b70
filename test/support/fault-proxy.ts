import { createServer, IncomingHttpHeaders, request as httpRequest, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

/** A made-up answer: a status, headers and a JSON body. */
export interface Injected {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * What the proxy does with the n-th request (0-based) that `matches`: `forward` it to the server;
 * `answer` in the server's stead (the server never sees it); forward it and `replace` the server's
 * answer (the work is done, the caller does not learn it: a lost answer); or forward it and
 * `abandon` it: answer the caller with this while the server still works on it (a gateway that
 * times out), once `after` resolves (at once without it). The server's own answer is dropped.
 */
export type Fault = { forward: true } | { answer: Injected } | { replace: Injected } | { abandon: Injected; after?: () => Promise<unknown> };

/**
 * A real HTTP proxy on loopback in front of a Keel host. Requests that `matches` selects follow
 * `plan` in order (then are forwarded); every other request is forwarded untouched. Each request
 * it saw is recorded with its headers.
 */
export class FaultProxy {
  readonly seen: ProxiedRequest[] = [];
  private server: Server | null = null;
  private matched = 0;

  constructor(
    private readonly target: string,
    private readonly matches: (request: ProxiedRequest) => boolean,
    private readonly plan: Fault[],
  ) {}

  async start(): Promise<string> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const seen = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers };
        this.seen.push(seen);
        const fault: Fault = this.matches(seen) ? (this.plan[this.matched++] ?? { forward: true }) : { forward: true };
        const send = (answer: Injected) =>
          res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body === undefined ? '' : JSON.stringify(answer.body));
        if ('answer' in fault) return send(fault.answer);
        const upstream = httpRequest({ host: target.hostname, port: target.port, method: seen.method, path: seen.path, headers: { ...req.headers, host: target.host } }, (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (c: Buffer) => body.push(c));
          answer.on('end', () => {
            if ('abandon' in fault) return;
            if ('replace' in fault) return send(fault.replace);
            res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(body));
          });
        });
        upstream.on('error', () => res.headersSent || send({ status: 502, body: { error: { code: 'BAD_GATEWAY', message: 'proxy: upstream failed' } } }));
        upstream.end(Buffer.concat(chunks));
        if ('abandon' in fault) void (fault.after?.() ?? Promise.resolve()).then(() => send(fault.abandon));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
  }
}
