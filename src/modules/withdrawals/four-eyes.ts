import { KeelError } from '../../platform/errors';

/**
 * Four eyes on what requireApprovalForTransfers holds (a transfer, a withdrawal from trading): the
 * API key that asked for it (`requestedBy`; an access token counts as the key that issued it) may
 * reject it, withdrawing its own request, but never approve it (403): another administrator must.
 * Null `requestedBy`, what Keel arranged itself or recorded before it kept requesters: any approver.
 */
export function checkFourEyes(requestedBy: string | null, decidedBy: string, approve: boolean): void {
  if (approve && requestedBy === decidedBy) throw KeelError.forbidden('The API key that asked for this transfer cannot approve it: another administrator must approve it (the requester may reject it)');
}
