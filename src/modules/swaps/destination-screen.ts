/**
 * THE hook point where a destination address is checked before Keel sends value to it on its own
 * initiative or on a swap request: every swap (its recipient) and every settlement-rule execution
 * (its destination) asks `check` first, and nothing is queued when it refuses. The AML sanctions
 * screening plugs in here (services.ts builds one DestinationScreen and hands it to both).
 */
export interface DestinationScreen {
  check(organizationId: string, address: string, blockchainId: string): Promise<DestinationVerdict>;
}

export type DestinationVerdict = { allowed: true } | { allowed: false; reason: string };

/** No screening configured: every destination passes. */
export const UNSCREENED: DestinationScreen = {
  async check() {
    return { allowed: true };
  },
};
