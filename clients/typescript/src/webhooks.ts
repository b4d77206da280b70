import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export { WebhookVerificationError };

/** A webhook delivery's body: Keel's event envelope. */
export interface KeelWebhookEvent<Data = Record<string, unknown>> {
  id: string;
  type: string;
  version: string;
  timestamp: string;
  environment: string;
  data: Data;
}

export interface VerifyOptions {
  /** How far the delivery's webhook-timestamp may be from now, either way (default 300 s, at most 300 s). */
  toleranceSeconds?: number;
  /** For tests: the clock, in milliseconds. */
  now?: () => number;
}

/** Standard Webhooks' own verifier also refuses timestamps more than five minutes off. */
const MAX_TOLERANCE_SECONDS = 300;

/**
 * Checks a delivery's Standard Webhooks signature (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`: HMAC-SHA256 of `id.timestamp.body`, compared in constant time) with the
 * subscription's secret (`whsec_…`), and its timestamp against replays, then returns the event.
 * Pass the body exactly as received (the raw bytes, not re-serialised JSON). During a secret rotation
 * pass both secrets: a delivery signed with either is accepted. Throws WebhookVerificationError.
 */
export function verifyWebhook<Data = Record<string, unknown>>(
  body: string | Buffer,
  headers: Record<string, string | string[] | undefined> | Headers,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): KeelWebhookEvent<Data> {
  const flat = flatHeaders(headers);
  const tolerance = Math.min(options.toleranceSeconds ?? MAX_TOLERANCE_SECONDS, MAX_TOLERANCE_SECONDS);
  const timestamp = Number(flat['webhook-timestamp']);
  const now = (options.now ?? Date.now)() / 1000;
  if (!Number.isInteger(timestamp)) throw new WebhookVerificationError('Missing or malformed webhook-timestamp');
  if (Math.abs(now - timestamp) > tolerance) throw new WebhookVerificationError(`Message timestamp more than ${tolerance} s from now`);
  const secrets = typeof secret === 'string' ? [secret] : secret;
  let refusal: unknown = new WebhookVerificationError('No secret given');
  for (const s of secrets) {
    try {
      return new Webhook(s).verify(typeof body === 'string' ? body : body.toString('utf8'), flat) as KeelWebhookEvent<Data>;
    } catch (error) {
      refusal = error;
    }
  }
  throw refusal;
}

function flatHeaders(headers: Record<string, string | string[] | undefined> | Headers): Record<string, string> {
  const entries: [string, string | string[] | undefined][] = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  return Object.fromEntries(entries.filter((e): e is [string, string | string[]] => e[1] !== undefined).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(' ') : v]));
}
