import { KeelError } from '../../platform/errors';
import { CORE_SCOPES, Host, PRO_PERMISSIONS } from '../../platform/auth/permissions';
import type { Principal } from '../../platform/auth/principal';
import { AccessTokenSigner, TokenPrincipal } from '../../platform/auth/access-tokens';
import { channelPermissions, CHANNEL_FORMS, parseRealtimeChannel, REALTIME_READ_PERMISSIONS } from './realtime-channels';

/** What a key asks for when it issues a token: scopes (core) or permissions (pro), and a lifetime. */
export interface AccessTokenRequest {
  /** Default: every scope or permission of the issuing key. */
  scopes?: string[] | null;
  ttlSeconds?: number | null;
}

/** The order book's realtime authorisation: the channels to narrow the token to, its permissions, its lifetime. */
export interface RealtimeAuthRequest {
  /** Default: every channel the permissions allow. */
  channels?: string[] | null;
  /**
   * Default: what the named channels need (public market channels: orderbook_market:read alone);
   * without channels, the reading permissions of the key (orderbook_market:read, orderbook_order:read).
   */
  permissions?: string[] | null;
  ttlSeconds?: number | null;
}

export interface AccessTokenView {
  token: string;
  tokenType: string;
  expiresAt: Date;
  expiresIn: number;
  host: string;
  organizationId: string;
  apiKeyId: string;
  scopes: string[];
  channels: string[] | null;
}

export interface TokenLifetimes {
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
}

/** Tells whether a market exists, for the market channels a token is narrowed to. */
export interface MarketDirectory {
  row(symbol: string): Promise<unknown>;
}

/**
 * Short-lived access tokens issued by an API key for its organisation: never wider than the key
 * (asking for more is 403 naming what the key lacks), bound to the key's host and environment,
 * expiring after a lifetime capped by configuration. A token cannot issue tokens: its holder could
 * otherwise keep renewing it past the key's intent.
 */
export class AccessTokenService {
  constructor(
    private readonly signer: AccessTokenSigner,
    private readonly markets: MarketDirectory,
    private readonly lifetimes: TokenLifetimes,
  ) {}

  async issue(issuer: Principal, request: AccessTokenRequest): Promise<AccessTokenView> {
    this.refuseTokenIssuer(issuer);
    const scopes = this.narrowed(issuer, request.scopes, 'scopes');
    return this.sign(issuer, scopes, null, request.ttlSeconds);
  }

  /** A token for the order book's realtime channels (and, with its permissions, its reads over HTTP). */
  async authorizeRealtime(issuer: Principal, request: RealtimeAuthRequest): Promise<AccessTokenView> {
    this.refuseTokenIssuer(issuer);
    if (issuer.host !== 'pro') throw new KeelError('BAD_REQUEST', 'Realtime channels are authorised on the order-book host');
    const permissions = request.permissions
      ? this.narrowed(issuer, request.permissions, 'permissions')
      : request.channels
        ? this.channelsNeed(issuer, request.channels)
        : REALTIME_READ_PERMISSIONS.filter((p) => issuer.can(p));
    const channels = request.channels ? await this.channels(request.channels, permissions) : null;
    return this.sign(issuer, permissions, channels, request.ttlSeconds);
  }

  /** The permissions the named channels need, each granted by the key (else 403); names that are no channel are reported by `channels`. */
  private channelsNeed(issuer: Principal, names: string[]): string[] {
    const needed = channelPermissions(names);
    return needed.length ? this.narrowed(issuer, needed, 'channels') : [];
  }

  private refuseTokenIssuer(issuer: Principal): void {
    if (issuer instanceof TokenPrincipal) throw KeelError.forbidden('An access token cannot issue access tokens; issue them with an API key');
  }

  /** The scopes asked for, each known on the host and granted by the key; the key's own when none are named. */
  private narrowed(issuer: Principal, asked: string[] | null | undefined, field: string): string[] {
    if (!asked) return [...issuer.scopes].filter((s) => issuer.can(s));
    if (!asked.length) throw KeelError.invalidField(field, 'must name at least one; leave it out for all of the key\'s');
    const known: readonly string[] = issuer.host === 'core' ? CORE_SCOPES : PRO_PERMISSIONS;
    const kind = issuer.host === 'core' ? 'scope' : 'permission';
    const unknown = asked.filter((s) => !known.includes(s));
    if (unknown.length) throw KeelError.invalidField(field, `unknown ${kind}: ${unknown.join(', ')}; allowed: ${known.join(', ')}`);
    const wider = asked.filter((s) => !issuer.can(s));
    if (wider.length) {
      throw KeelError.forbidden(`This API key lacks the ${kind}${wider.length > 1 ? 's' : ''} ${wider.map((s) => `'${s}'`).join(', ')}; a token cannot be wider than the key that issues it`);
    }
    return [...new Set(asked)];
  }

  /** Channel names checked and normalised: known forms, existing markets, each allowed by the token's permissions. */
  private async channels(asked: string[], permissions: string[]): Promise<string[]> {
    const names = new Set<string>();
    for (const [i, name] of asked.entries()) {
      const channel = parseRealtimeChannel(name);
      if (!channel) throw KeelError.invalidField(`channels.${i}`, `'${name}' is not a channel; channels are ${CHANNEL_FORMS}`);
      if (!permissions.includes(channel.permission)) {
        throw KeelError.forbidden(`The channel '${channel.name}' needs the permission '${channel.permission}', which this token would not carry`);
      }
      if (channel.market !== undefined) {
        await this.markets.row(channel.market).catch((error: unknown) => {
          if (error instanceof KeelError && error.status === 404) throw KeelError.invalidField(`channels.${i}`, `no market '${channel.market}'`);
          throw error;
        });
      }
      names.add(channel.name);
    }
    return [...names];
  }

  private async sign(issuer: Principal, scopes: string[], channels: string[] | null, ttlSeconds: number | null | undefined): Promise<AccessTokenView> {
    const asked = ttlSeconds ?? this.lifetimes.defaultTtlSeconds;
    if (asked < 1 || asked > this.lifetimes.maxTtlSeconds) throw KeelError.invalidField('ttlSeconds', `must be between 1 and ${this.lifetimes.maxTtlSeconds} seconds`);
    // A secret a rotation left in its grace period mints tokens that end with it, not after.
    const ttl = issuer.secretExpiresAt ? Math.max(1, Math.min(asked, Math.floor((issuer.secretExpiresAt.getTime() - Date.now()) / 1000))) : asked;
    const host: Host = issuer.host;
    const grant = { organizationId: issuer.organizationId, apiKeyId: issuer.apiKeyId, keyGeneration: issuer.keyGeneration, host, environment: issuer.environment, scopes, channels };
    const { token, expiresAt } = await this.signer.sign(grant, ttl);
    return { token, tokenType: 'Bearer', expiresAt, expiresIn: ttl, host, organizationId: issuer.organizationId, apiKeyId: issuer.apiKeyId, scopes, channels };
  }
}
