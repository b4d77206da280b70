import { GuardedHttp, OutboundRequestError } from '../../platform/net/guarded-http';
import type { OutboundGuard } from '../../platform/net/outbound-guard';
import { storable } from '../../platform/storable-text';

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  errorMessage: string | null;
  durationMs: number;
}

const RESPONSE_BODY_CAP = 1_024;

/**
 * POSTs one signed body through the guarded connector; at most RESPONSE_BODY_CAP bytes of the answer
 * are kept, made storable (a NUL in it would fail the write recording the outcome).
 */
export class WebhookSender {
  private readonly http: GuardedHttp;

  constructor(guard: OutboundGuard, timeoutMs: number) {
    this.http = new GuardedHttp(guard, { timeoutMs, maxResponseBytes: RESPONSE_BODY_CAP });
  }

  /** Throws ConnectorClosed, and sends nothing, once close() has begun. */
  async send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const started = performance.now();
    const durationMs = () => Math.round(performance.now() - started);
    try {
      const response = await this.http.request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'Keel-Webhooks/1.0', ...headers },
      });
      const excerpt = response.body.toString('utf8').trim();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, statusCode: response.statusCode, errorMessage: ok ? null : storable(`receiver answered ${response.statusCode}${excerpt ? `: ${excerpt}` : ''}`), durationMs: durationMs() };
    } catch (error) {
      if (!(error instanceof OutboundRequestError)) throw error;
      return { ok: false, statusCode: null, errorMessage: storable(error.message), durationMs: durationMs() };
    }
  }

  async close(): Promise<void> {
    await this.http.close();
  }
}
