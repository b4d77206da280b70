/**
 * The deposits module's face: what other modules may use of it. Chain activity of watched wallets: deposits found, recorded and told to listeners; the transfer history.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { ChainActivityRecorder } from './chain-activity-recorder';
import type { ChainTransferHistoryService } from './chain-transfer-history.service';
import type { NftHoldingsService } from './nft-holdings.service';

export { flagDeposit, flaggedDeposit, flaggedDeposits, heldByAml, releaseFlaggedDeposit, unreleasedFlags } from './aml-holds';
export { blockTimesOf, chainTransferColumn, chainTransferById, scannedBlockNumber } from './deposit-rows';
export type { ChainFee, DepositListener, OutflowListener } from './chain-activity-recorder';

// The row shape of a recorded chain transfer, for types only: other modules read the table through the functions above.
export type { ChainTransferModel } from './chain-transfer.model';

export { createDepositsServices } from './deposits-services';

/** The deposits module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface DepositsServices {
  /** Records chain activity of watched wallets; the deposit watchers write through it. */
  chainActivity: ChainActivityRecorder;
  chainTransferHistory: ChainTransferHistoryService;
  /** The NFTs a master wallet or deposit address holds, read from the chain. */
  nftHoldings: NftHoldingsService;
}
