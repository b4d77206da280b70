import { createHash } from 'node:crypto';
import { Knex } from 'knex';
import { KeelError } from './errors';
import { SecretBox } from './crypto/secret-box';
import type { StatementPart } from './db/one-statement';
import { holderAliveSql } from './db/session-holder';
import { decodeResult, encodeResult } from './result-codec';

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

/** A request's claim on its key, as the units of work it runs carry it. */
export interface ClaimRef {
  apiKeyId: string;
  key: string;
}

/** One unit of work of a claimed request: the n-th, in the order the request ran them. */
export interface ClaimStep extends ClaimRef {
  step: number;
}

/** A step's recorded result, if an earlier attempt of the request committed it. */
export type Recorded<R> = { found: true; value: R } | { found: false };

/** The longest Idempotency-Key Keel takes. */
export const KEY_MAX_LENGTH = 255;
/**
 * What an Idempotency-Key may be: 1 to KEY_MAX_LENGTH printable ASCII characters (no space). The
 * OpenAPI documents state it from this, so the two do not drift.
 */
export const KEY_PATTERN = new RegExp(`^[\\x21-\\x7e]{1,${KEY_MAX_LENGTH}}$`);

/**
 * The 409 CONFLICT of a repeat that arrives while the first request under its key still runs is
 * transient, unlike the CONFLICT of a resource's state: its details.reason says so, and its
 * Retry-After when to send the same request, under the same key, again.
 */
export const KEY_IN_PROGRESS = 'IDEMPOTENCY_KEY_IN_PROGRESS';
export const KEY_IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

/**
 * Idempotency keys, after Stripe's design: a key is claimed atomically in PostgreSQL before the
 * work runs, the first response is stored, and a repeat replays it. The same key with another
 * request is refused (422); a repeat while the first is still running gets 409 (KEY_IN_PROGRESS). A claim records the
 * live-process id of the node that holds it (SessionHolder): once that process is gone (its
 * PostgreSQL session, and so its advisory lock, ended with it) the claim is taken over at once; it
 * is also taken over once its lock is older than `lockSeconds` (a live node that lost track of it,
 * or a claim made while the node had no id), and at once after a 5xx.
 *
 * The results of the work a request commits are recorded on its claim in the work's own
 * transaction (see UnitOfWork), so a crash between that commit and the stored response costs a
 * replay, not a second execution: a take-over keeps them (only expiry wipes a claim). Stored
 * responses and results are sealed (SecretBox), as some hold secrets shown once.
 */
export class IdempotencyStore {
  constructor(
    private readonly db: Knex,
    private readonly ttlSeconds: number,
    private readonly lockSeconds: number,
    private readonly box: SecretBox,
    /** This process's live-process id (SessionHolder); null while it has none. */
    private readonly holder: { readonly id: number | null } = { id: null },
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
      `INSERT INTO idempotency_keys (api_key_id, key, fingerprint, method, path, locked_at, holder, expires_at)
       VALUES (?, ?, ?, ?, ?, now(), ?::integer, now() + make_interval(secs => ?::double precision))
       ON CONFLICT (api_key_id, key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, method = EXCLUDED.method, path = EXCLUDED.path,
             locked_at = now(), holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, response_status = NULL,
             response_body = NULL, response_content_type = NULL, created_at = now(),
             results = CASE WHEN idempotency_keys.expires_at <= now() THEN '{}'::jsonb ELSE idempotency_keys.results END
         WHERE idempotency_keys.expires_at <= now()
            OR (idempotency_keys.response_status IS NULL
                AND idempotency_keys.fingerprint = EXCLUDED.fingerprint
                AND (idempotency_keys.locked_at IS NULL
                     OR idempotency_keys.locked_at < now() - make_interval(secs => ?::double precision)
                     OR (idempotency_keys.holder IS NOT NULL
                         AND idempotency_keys.holder IS DISTINCT FROM EXCLUDED.holder
                         AND NOT ${holderAliveSql('idempotency_keys.holder')})))
       RETURNING 1`,
      [req.apiKeyId, req.key, fingerprint, req.method, req.path, this.holder.id, this.ttlSeconds, this.lockSeconds],
    );
    if (inserted.rowCount === 1) return { kind: 'claimed' };

    const row = await this.db('idempotency_keys').where({ apiKeyId: req.apiKeyId, key: req.key }).first();
    if (!row) return this.claim(req); // expired and purged between the two statements
    if (row.fingerprint !== fingerprint) {
      // The spec's VALIDATION_ERROR carries details.fields; the field at fault is the header.
      const error = `was already used for a different request (${row.method} ${row.path})`;
      throw new KeelError('VALIDATION_ERROR', `Idempotency-Key ${error}; use a new key for a new operation`, { fields: [{ field: 'Idempotency-Key', error }] });
    }
    if (row.responseStatus === null) {
      const inProgress = new KeelError('CONFLICT', 'A request with this Idempotency-Key is still being processed; retry shortly with the same key', { reason: KEY_IN_PROGRESS });
      inProgress.retryAfterSeconds = KEY_IN_PROGRESS_RETRY_AFTER_SECONDS;
      throw inProgress;
    }
    // A response stored before migration 008 is plain text, read as it is until it expires.
    const body = SecretBox.isSealed(row.responseBody) ? this.box.open(row.responseBody, sealedAs(req, 'response')) : row.responseBody;
    return { kind: 'replay', response: { status: row.responseStatus, body, contentType: row.responseContentType } };
  }

  async complete(apiKeyId: string, key: string, response: StoredResponse): Promise<void> {
    const body = this.box.seal(response.body, sealedAs({ apiKeyId, key }, 'response'));
    await this.db('idempotency_keys')
      .where({ apiKeyId, key })
      .update({ responseStatus: response.status, responseBody: body, responseContentType: response.contentType, lockedAt: null });
  }

  /**
   * Server errors are not stored: the client's retry with the same key should run again. A claim
   * on which work was already committed is kept and unlocked, so that retry replays that work's
   * results at once instead of doing it twice.
   */
  async release(apiKeyId: string, key: string): Promise<void> {
    const open = () => this.db('idempotency_keys').where({ apiKeyId, key }).whereNull('responseStatus');
    await open().whereRaw(`results <> '{}'::jsonb`).update({ lockedAt: null });
    await open().whereRaw(`results = '{}'::jsonb`).delete();
  }

  /** The step's result if an earlier attempt committed it; locks the claim until `trx` ends. */
  async recorded<R>(trx: Knex.Transaction, step: ClaimStep): Promise<Recorded<R>> {
    return this.readRecorded<R>(trx, step, true);
  }

  /** The same, without a lock: for work committed as a part of a composed statement (resultsPart). */
  async recordedNow<R>(step: ClaimStep): Promise<Recorded<R>> {
    return this.readRecorded<R>(this.db, step, false);
  }

  /** Records the step's result on its claim, inside the transaction of the work that produced it. */
  async record(trx: Knex.Transaction, step: ClaimStep, value: unknown): Promise<void> {
    const { sql, bindings } = this.resultsPart([{ step, value }]);
    await trx.raw(sql, bindings as Knex.RawBinding[]);
  }

  /**
   * Records steps' results as a part of a composed statement (runAsOneStatement), atomic with the
   * rest of it. The statement is refused if a step already has a result: an attempt that took the
   * claim over committed it first, and this one must not commit the work a second time.
   */
  resultsPart(entries: readonly { step: ClaimStep; value: unknown }[]): StatementPart {
    const rows = entries.map(({ step, value }) => ({
      api_key_id: step.apiKeyId,
      key: step.key,
      step: String(step.step),
      sealed: this.box.seal(encodeResult(value), sealedAs(step, `step ${step.step}`)),
    }));
    return {
      name: 'idempotency_results',
      sql: `UPDATE idempotency_keys AS k SET results = k.results || jsonb_build_object(r.step, r.sealed)
              FROM jsonb_to_recordset(?::jsonb) AS r(api_key_id uuid, key text, step text, sealed text)
             WHERE k.api_key_id = r.api_key_id AND k.key = r.key AND k.results -> r.step IS NULL
         RETURNING 1`,
      bindings: [JSON.stringify(rows)],
      expectRows: rows.length,
    };
  }

  private async readRecorded<R>(db: Knex, step: ClaimStep, lock: boolean): Promise<Recorded<R>> {
    const query = db('idempotency_keys')
      .where({ apiKeyId: step.apiKeyId, key: step.key })
      .first(db.raw('results ->> ?::text AS sealed', [String(step.step)]));
    const row = await (lock ? query.forUpdate() : query);
    const sealed: unknown = row?.sealed;
    return typeof sealed === 'string' ? { found: true, value: decodeResult<R>(this.box.open(sealed, sealedAs(step, `step ${step.step}`))) } : { found: false };
  }

  async purgeExpired(): Promise<number> {
    return this.db('idempotency_keys').where('expiresAt', '<=', this.db.fn.now()).delete();
  }
}

/** Each sealed value is bound to its claim and its place there, so it cannot be replayed for another. */
function sealedAs(claim: ClaimRef, what: string): string {
  return `idempotency:${claim.apiKeyId}:${claim.key}:${what}`;
}
