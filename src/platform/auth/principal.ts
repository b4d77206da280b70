import { Environment, grants, Host, Tier } from './permissions';

/** Who is calling: resolved from the apiKey and orgId headers once per request. */
export class Principal {
  constructor(
    readonly organizationId: string,
    readonly apiKeyId: string,
    readonly host: Host,
    readonly environment: Environment,
    readonly scopes: ReadonlySet<string>,
    readonly tier: Tier,
    /** Whether the key belongs to the operator's organisation (see OPERATOR_PERMISSIONS). */
    readonly operator = false,
    /** Channels a realtime token was narrowed to; null: every channel its permissions allow. */
    readonly channels: ReadonlySet<string> | null = null,
    /** The agent whose key this is (scope 'agent'); null for every other key. */
    readonly agentId: string | null = null,
    /** The key's generation (raised by each rotation); its access tokens carry the one they were issued under. */
    readonly keyGeneration = 0,
    /** When the presented secret stops working: set for a secret a rotation left in its grace period. */
    readonly secretExpiresAt: Date | null = null,
  ) {}

  can(required: string): boolean {
    return grants(this.host, this.scopes, required, this.operator);
  }

  mayUseChannel(channel: string): boolean { return this.channels === null || this.channels.has(channel); }

  /**
   * The name an Idempotency-Key is claimed under (beside the key's id): the key as sent. An access
   * token's claims are apart from its issuing key's (TokenPrincipal), so a replay never hands a
   * narrower credential an answer made for a wider one.
   */
  claimKey(key: string): string {
    return key;
  }
}
