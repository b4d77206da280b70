/**
 * THE hook point where a destination address is checked before Keel sends value to it on its own
 * initiative or on a swap request: every swap (its recipient) and every settlement-rule execution
 * (its destination) asks `check` first, and nothing is queued when it refuses. The AML sanctions
 * screening plugs in here (services.ts builds one DestinationScreen and hands it to both).
 */
export interface DestinationScreen {
  check(organizationId: string, address: string, blockchainId: string): Promise<DestinationVerdict>;
}

/** A refusal names its error code (SANCTIONED_ADDRESS for the sanctions screen) and says why. */
export type DestinationVerdict = { allowed: true } | { allowed: false; code: 'SANCTIONED_ADDRESS' | 'FORBIDDEN'; reason: string };
