import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the receiver answers the n-th request (0-based) it gets; a status code or a delay then a status. */
export type Answer = (request: ReceivedRequest, index: number) => number | Promise<number>;

/** A real HTTP receiver on loopback that records every request it gets. */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private server: Server | null = null;

  constructor(public answer: Answer = () => 200) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        const index = this.requests.push(received) - 1;
        const status = await this.answer(received, index);
        res.writeHead(status, { 'content-type': 'text/plain' }).end(status >= 300 ? 'receiver says no' : 'ok');
      });
    });
    this.server.keepAliveTimeout = 1_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  eventIds(): string[] {
    return this.requests.map((r) => JSON.parse(r.body).id as string);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

export { eventually } from './eventually';
