import type { DestinationScreen } from '../swaps';
import type { SanctionsScreen } from './sanctions-screen';

/** The sanctions screen as the destination check of swaps and settlement-rule executions. */
export function sanctionsDestinationScreen(sanctions: SanctionsScreen): DestinationScreen {
  return {
    async check(_organizationId, address) {
      const result = sanctions.screen(address);
      if (!result.sanctioned) return { allowed: true };
      return { allowed: false, code: 'SANCTIONED_ADDRESS', reason: `${address} is on a sanctions list (${result.matches.map((m) => m.list).join(', ')}); Keel does not send to it` };
    },
  };
}
