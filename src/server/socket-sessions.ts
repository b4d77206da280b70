import { CloseCode } from 'graphql-ws';
import type { Authenticator, Credentials, KeySession } from '../platform/auth/authenticator';
import type { Host } from '../platform/auth/permissions';
import type { Principal } from '../platform/auth/principal';
import { isKeelError, KeelError } from '../platform/errors';

/** setTimeout's longest delay; a later expiry is re-checked when this one fires. */
const MAX_TIMER_MS = 2_147_483_647;

/** One open websocket connection and the key (or access token) it authenticated with. */
export interface SocketSession {
  readonly credentials: Credentials;
  principal: Principal;
  close(code: number, reason: string): void;
  expiryTimer?: NodeJS.Timeout;
}

export interface SocketSessionOptions {
  /** How often every open connection's key is re-checked even without an invalidation. */
  recheckEveryMs: number;
  /** Connections one API key may hold open on this node's host, those of the tokens it issued included. */
  maxPerKey: number;
  /** Connections one organisation may hold open on this node's host, all its keys together. */
  maxPerOrganization: number;
  /** What opening a connection spends once its key is known (the key's rate limit); throws to refuse it. */
  spend(principal: Principal): Promise<unknown>;
}

/**
 * Keeps long-lived connections under the same key rules as HTTP requests. A session is checked
 * through the authenticator (its per-node cache) on every operation; it is closed when any node
 * revokes or rotates its key and the key no longer authenticates, when its secret's rotation grace
 * ends or its access token expires, and, should an invalidation be lost with Redis, at the next
 * periodic check. A token's connection is tracked under its issuing key, so revoking the key ends it.
 * Opening one spends a request of the key's rate limit, and a key (its tokens' connections counted
 * under it) and an organisation each hold at most so many open connections.
 */
export class SocketSessions {
  private readonly byKey = new Map<string, Set<SocketSession>>();
  /** Open connections per organisation. */
  private readonly byOrganization = new Map<string, number>();
  private readonly stopListening: () => void;
  private readonly sweep: NodeJS.Timeout;

  constructor(
    private readonly authenticator: Authenticator,
    private readonly host: Host,
    private readonly options: SocketSessionOptions,
  ) {
    this.stopListening = authenticator.onInvalidate((keyId) => void this.recheckKey(keyId));
    this.sweep = setInterval(() => void this.recheckAll(), options.recheckEveryMs);
    this.sweep.unref();
  }

  /**
   * Authenticates a new connection, spends what it costs and tracks it; throws the KeelError when the
   * key does not authenticate, its rate limit is spent or it (or its organisation) holds as many
   * connections as it may (429 RATE_LIMIT_EXCEEDED).
   */
  async open(credentials: Credentials, close: SocketSession['close']): Promise<SocketSession> {
    const { principal, secretExpiresAt } = await this.authenticator.session(this.host, credentials);
    await this.options.spend(principal);
    const { maxPerKey, maxPerOrganization } = this.options;
    let sessions = this.byKey.get(principal.apiKeyId);
    if ((sessions?.size ?? 0) >= maxPerKey) throw tooManyConnections('this API key', maxPerKey);
    const inOrganization = this.byOrganization.get(principal.organizationId) ?? 0;
    if (inOrganization >= maxPerOrganization) throw tooManyConnections('this organisation', maxPerOrganization);
    const session: SocketSession = { credentials, principal, close };
    if (!sessions) this.byKey.set(principal.apiKeyId, (sessions = new Set()));
    sessions.add(session);
    this.byOrganization.set(principal.organizationId, inOrganization + 1);
    this.scheduleExpiry(session, secretExpiresAt);
    return session;
  }

  /** Re-authenticates the session's key (cached per node); closes the connection and throws when it no longer authenticates. */
  async check(session: SocketSession): Promise<Principal> {
    return this.apply(session, this.authenticator.session(this.host, session.credentials));
  }

  private async apply(session: SocketSession, verdict: Promise<KeySession>): Promise<Principal> {
    try {
      const { principal, secretExpiresAt } = await verdict;
      session.principal = principal;
      if (this.byKey.get(principal.apiKeyId)?.has(session)) this.scheduleExpiry(session, secretExpiresAt);
      return principal;
    } catch (error) {
      // Only a verdict on the key closes the connection; a database hiccup fails this operation alone.
      if (isKeelError(error) && error.status === 401) this.end(session, error.message);
      throw error;
    }
  }

  /** Stops tracking the session, closing its connection with `reason` when one is given (4401: graphql-ws clients do not reconnect after it). */
  end(session: SocketSession, reason?: string): void {
    clearTimeout(session.expiryTimer);
    const { apiKeyId, organizationId } = session.principal;
    const sessions = this.byKey.get(apiKeyId);
    if (sessions?.delete(session)) {
      if (sessions.size === 0) this.byKey.delete(apiKeyId);
      const left = (this.byOrganization.get(organizationId) ?? 1) - 1;
      if (left > 0) this.byOrganization.set(organizationId, left);
      else this.byOrganization.delete(organizationId);
    }
    if (reason !== undefined) session.close(CloseCode.Unauthorized, reason);
  }

  dispose(): void {
    this.stopListening();
    clearInterval(this.sweep);
    for (const sessions of this.byKey.values()) for (const session of sessions) clearTimeout(session.expiryTimer);
    this.byKey.clear();
    this.byOrganization.clear();
  }

  private scheduleExpiry(session: SocketSession, secretExpiresAt: Date | null): void {
    clearTimeout(session.expiryTimer);
    session.expiryTimer = undefined;
    if (!secretExpiresAt) return;
    const delay = Math.min(Math.max(0, secretExpiresAt.getTime() - Date.now()), MAX_TIMER_MS);
    session.expiryTimer = setTimeout(() => void this.quietCheck(session), delay);
    session.expiryTimer.unref();
  }

  /** One lookup per distinct secret, however many connections use it. */
  private async recheckKey(keyId: string): Promise<void> {
    const verdicts = new Map<string, Promise<KeySession>>();
    const sessions = [...(this.byKey.get(keyId) ?? [])];
    await Promise.all(
      sessions.map((session) => {
        const { apiKey, orgId, token } = session.credentials;
        const id = `${apiKey}\n${orgId}\n${token}`;
        if (!verdicts.has(id)) verdicts.set(id, this.authenticator.session(this.host, session.credentials));
        return this.apply(session, verdicts.get(id)!).catch(() => undefined);
      }),
    );
  }

  private async recheckAll(): Promise<void> {
    await Promise.all([...this.byKey.keys()].map((keyId) => this.recheckKey(keyId)));
  }

  private async quietCheck(session: SocketSession): Promise<void> {
    await this.check(session).catch(() => undefined);
  }
}

function tooManyConnections(holder: string, limit: number): KeelError {
  return new KeelError('RATE_LIMIT_EXCEEDED', `Too many connections: ${holder} holds ${limit} open on this node; close one first`, { limit });
}
