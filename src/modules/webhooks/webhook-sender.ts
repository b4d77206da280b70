import { Agent, request } from 'undici';
import type { OutboundGuard } from '../../platform/net/outbound-guard';

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  errorMessage: string | null;
  durationMs: number;
}

const RESPONSE_BODY_CAP = 1_024;

/**
 * POSTs one signed body. Redirects are not followed, the whole exchange is bounded by the timeout,
 * at most RESPONSE_BODY_CAP bytes of the answer are read, and every connection re-checks the
 * resolved address through the outbound guard.
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(
    guard: OutboundGuard,
    private readonly timeoutMs: number,
  ) {
    this.agent = new Agent({ connect: { lookup: guard.lookup as never, timeout: timeoutMs }, keepAliveTimeout: 10_000, connections: 256 });
  }

  async send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const started = performance.now();
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      const response = await request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'Keel-Webhooks/1.0', ...headers },
        dispatcher: this.agent,
        signal,
      });
      const excerpt = await readCapped(response.body);
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return {
        ok,
        statusCode: response.statusCode,
        errorMessage: ok ? null : `receiver answered ${response.statusCode}${excerpt ? `: ${excerpt}` : ''}`,
        durationMs: Math.round(performance.now() - started),
      };
    } catch (error) {
      const message = signal.aborted ? `no answer within ${this.timeoutMs} ms` : describe(error);
      return { ok: false, statusCode: null, errorMessage: message, durationMs: Math.round(performance.now() - started) };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= RESPONSE_BODY_CAP) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_BODY_CAP).toString('utf8').trim();
}

function describe(error: unknown): string {
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const inner = e.cause ?? e;
  return [inner.code, inner.message].filter(Boolean).join(': ') || 'request failed';
}
