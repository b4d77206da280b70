import { createHash } from 'node:crypto';
import { Knex } from 'knex';
import { KeelError } from './errors';

export interface StoredResponse {
  status: number;
  body: string;
  contentType: string | null;
}

export type Claim = { kind: 'claimed' } | { kind: 'replay'; response: StoredResponse };

export interface IdempotentRequest {
  apiKeyId: string;
  key: string;
  method: string;
  path: string;
  body: unknown;
}

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * Idempotency keys, after Stripe's design: a key is claimed atomically in PostgreSQL before the
 * work runs, the first response is stored, and a repeat replays it. The same key with another
 * request is refused (422); a repeat while the first is still running gets 409. A claim whose
 * worker died is taken over once its lock is older than `lockSeconds`.
 */
export class IdempotencyStore {
  constructor(
    private readonly db: Knex,
    private readonly ttlSeconds: number,
    private readonly lockSeconds: number,
  ) {}

  static validKey(key: string): boolean {
    return KEY_PATTERN.test(key);
  }

  static fingerprint(req: IdempotentRequest): string {
    return createHash('sha256')
      .update(`${req.method}\n${req.path}\n${req.body === undefined ? '' : JSON.stringify(req.body)}`)
      .digest('hex');
  }

  async claim(req: IdempotentRequest): Promise<Claim> {
    const fingerprint = IdempotencyStore.fingerprint(req);
    const inserted = await this.db.raw(
      `INSERT INTO idempotency_keys (api_key_id, key, fingerprint, method, path, locked_at, expires_at)
       VALUES (?, ?, ?, ?, ?, now(), now() + make_interval(secs => ?::double precision))
       ON CONFLICT (api_key_id, key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, method = EXCLUDED.method, path = EXCLUDED.path,
             locked_at = now(), expires_at = EXCLUDED.expires_at, response_status = NULL,
             response_body = NULL, response_content_type = NULL, created_at = now()
         WHERE idempotency_keys.expires_at <= now()
            OR (idempotency_keys.response_status IS NULL
                AND idempotency_keys.fingerprint = EXCLUDED.fingerprint
                AND idempotency_keys.locked_at < now() - make_interval(secs => ?::double precision))
       RETURNING 1`,
      [req.apiKeyId, req.key, fingerprint, req.method, req.path, this.ttlSeconds, this.lockSeconds],
    );
    if (inserted.rowCount === 1) return { kind: 'claimed' };

    const row = await this.db('idempotency_keys').where({ apiKeyId: req.apiKeyId, key: req.key }).first();
    if (!row) return this.claim(req); // expired and purged between the two statements
    if (row.fingerprint !== fingerprint) {
      throw new KeelError(
        'VALIDATION_ERROR',
        `Idempotency-Key was already used for a different request (${row.method} ${row.path}); use a new key for a new operation`,
      );
    }
    if (row.responseStatus === null) {
      throw new KeelError('CONFLICT', 'A request with this Idempotency-Key is still being processed; retry shortly');
    }
    return { kind: 'replay', response: { status: row.responseStatus, body: row.responseBody, contentType: row.responseContentType } };
  }

  async complete(apiKeyId: string, key: string, response: StoredResponse): Promise<void> {
    await this.db('idempotency_keys')
      .where({ apiKeyId, key })
      .update({ responseStatus: response.status, responseBody: response.body, responseContentType: response.contentType, lockedAt: null });
  }

  /** Server errors are not stored: the client's retry with the same key should run the work again. */
  async release(apiKeyId: string, key: string): Promise<void> {
    await this.db('idempotency_keys').where({ apiKeyId, key }).whereNull('responseStatus').delete();
  }

  async purgeExpired(): Promise<number> {
    return this.db('idempotency_keys').where('expiresAt', '<=', this.db.fn.now()).delete();
  }
}
