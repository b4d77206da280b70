/**
 * The deposits module's face: what other modules may use of it. Chain activity of watched wallets: deposits found, recorded and told to listeners; the transfer history.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { ChainActivityRecorder } from './chain-activity-recorder';
import type { ChainTransferHistoryService } from './chain-transfer-history.service';

export { heldByAml, unreleasedFlags } from './aml-holds';
export type { DepositListener } from './chain-activity-recorder';

// Tables other modules still query directly (issue 33): each such query is to become a function of this face.
export { ChainTransferModel } from './chain-transfer.model';

/** The deposits module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface DepositsServices {
  /** Records chain activity of watched wallets; the deposit watchers write through it. */
  chainActivity: ChainActivityRecorder;
  chainTransferHistory: ChainTransferHistoryService;
}
