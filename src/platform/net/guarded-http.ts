import { Agent, request } from 'undici';
import type { OutboundGuard } from './outbound-guard';

export interface GuardedHttpLimits {
  /** The whole exchange, connect to the last byte read. */
  timeoutMs: number;
  /** Bytes of an answer read at most; the rest is dropped unread. */
  maxResponseBytes: number;
  connections?: number;
  keepAliveMs?: number;
}

export interface GuardedResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The answer was longer than maxResponseBytes; `body` holds its start. */
  truncated: boolean;
}

/** A request that got no HTTP answer: refused by the guard, unreachable, or too slow. */
export class OutboundRequestError extends Error {}

/** The connector was closed (its process is stopping) before the request: nothing was sent. */
export class ConnectorClosed extends Error {
  constructor() {
    super('the outbound connector is closed; nothing was sent');
    this.name = 'ConnectorClosed';
  }
}

/**
 * The one connector for HTTP requests to caller-supplied URLs (webhook deliveries, recovery RPC
 * URLs). Every connection checks the address it is about to use through the outbound guard (a name
 * is resolved and checked at connect time, so a DNS change after the URL was accepted cannot reach
 * a private network); redirects are never followed (a 3xx is the answer); the exchange is bounded in
 * time and the answer in size.
 */
export class GuardedHttp {
  private readonly agent: Agent;

  constructor(
    readonly guard: OutboundGuard,
    private readonly limits: GuardedHttpLimits,
  ) {
    this.agent = new Agent({
      connect: { lookup: guard.lookup as never, timeout: limits.timeoutMs },
      keepAliveTimeout: limits.keepAliveMs ?? 10_000,
      connections: limits.connections ?? 256,
    });
  }

  async request(url: string, init: { method: string; headers?: Record<string, string>; body?: string | Uint8Array }): Promise<GuardedResponse> {
    const refused = this.guard.refuseLiteral(new URL(url).hostname);
    if (refused) throw new OutboundRequestError(refused);
    // undici refuses it too (UND_ERR_CLOSED, then UND_ERR_DESTROYED), but as if the request had failed.
    if (this.agent.closed || this.agent.destroyed) throw new ConnectorClosed();
    const signal = AbortSignal.timeout(this.limits.timeoutMs);
    try {
      const response = await request(url, { method: init.method as 'POST', headers: init.headers, body: init.body, dispatcher: this.agent, signal });
      const { body, truncated } = await readCapped(response.body, this.limits.maxResponseBytes);
      const headers = Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v ?? '')]));
      return { statusCode: response.statusCode, headers, body, truncated };
    } catch (error) {
      throw new OutboundRequestError(signal.aborted ? `no answer within ${this.limits.timeoutMs} ms` : describe(error));
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }, cap: number): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > cap) {
      body.destroy();
      return { body: Buffer.concat(chunks).subarray(0, cap), truncated: true };
    }
  }
  return { body: Buffer.concat(chunks), truncated: false };
}

function describe(error: unknown): string {
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const inner = e.cause ?? e;
  return [inner.code, inner.message].filter(Boolean).join(': ') || 'request failed';
}
