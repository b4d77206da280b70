import { createHmac, randomBytes } from 'node:crypto';
import type { SealedColumn } from '../../platform/crypto/reseal';

/** Signing secrets are sealed at rest, bound to their subscription (`keel secrets reseal` moves them to a new key). */
export const SEALED_WEBHOOK_SECRETS: SealedColumn = { table: 'webhook_secrets', column: 'sealedSecret', boundBy: 'subscriptionId' };

/**
 * Two signatures on every delivery, one per active secret each (space-separated during a rotation):
 * - `X-Keel-Signature`: hex HMAC-SHA256 of the exact body bytes, keyed with the secret string as shown.
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`): HMAC-SHA256
 *   of `id.timestamp.body`, keyed with the base64-decoded part after `whsec_`, so off-the-shelf
 *   Standard Webhooks verifiers work unchanged.
 */
const SECRET_PREFIX = 'whsec_';

export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

export function keelSignature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

export function standardWebhooksSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export function signatureHeaders(secrets: readonly string[], eventId: string, body: string, now = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'x-keel-signature': secrets.map((s) => keelSignature(s, body)).join(' '),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => standardWebhooksSignature(s, eventId, timestamp, body)).join(' '),
  };
}
