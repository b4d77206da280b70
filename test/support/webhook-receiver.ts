import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * How the receiver answers the n-th request (0-based) it gets: a status code (or a delay then one), or
 * a status with the body to answer.
 */
export type Answer = (request: ReceivedRequest, index: number) => Reply | Promise<Reply>;
type Reply = number | { status: number; body: string };

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
        const reply = await this.answer(received, index);
        const { status, body } = typeof reply === 'number' ? { status: reply, body: reply >= 300 ? 'receiver says no' : 'ok' } : reply;
        res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
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

/** A delivery due now, written straight to the table, as if its job had never been queued. */
export async function dueDelivery(db: Knex, organizationId: string, subscriptionId: string, eventId: string): Promise<string> {
  const [{ id }] = await db('webhook_deliveries')
    .insert({
      organizationId,
      subscriptionId,
      eventId,
      eventSequence: 0,
      type: 'master.updated',
      payload: { id: eventId, type: 'master.updated', version: '1.0', timestamp: new Date().toISOString(), environment: 'sandbox', data: {} },
      nextAttemptAt: new Date(),
    })
    .returning('id');
  return id;
}

export { eventually } from './eventually';
