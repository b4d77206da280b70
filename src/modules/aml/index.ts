/**
 * The aml module's face: what other modules may use of it. Sanctions screening: the lists in use, batch checks, wallets' AML settings and flagged deposits.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { SanctionedDepositFlagger } from './sanctioned-deposit-flagger';
import type { AmlService } from './aml.service';
import type { FlaggedTransferService } from './flagged-transfer.service';
import type { SanctionsLists } from './sanctions-lists';
import type { SanctionsScreen, SanctionsSnapshot } from './sanctions-screen';
import type { WalletAml } from './wallet-aml';

export { sanctionsDestinationScreen } from './sanctions-destination-screen';
export type { ScreeningResult } from './sanctions-screen';

export { createAmlServices } from './aml-services';

/** The aml module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface AmlServices {
  /** In-process sanctions screening against the lists in use (the shipped snapshot or a newer one loaded with `keel aml load`). */
  sanctions: SanctionsScreen;
  /** The lists loaded into PostgreSQL with `keel aml load`, and the snapshot shipped with Keel. */
  sanctionsLists: SanctionsLists;
  shippedSanctions: SanctionsSnapshot;
  /** The AML API: batch checks and the lists in use. */
  aml: AmlService;
  /** A wallet's or address's configurations.aml, and the refusal of sanctioned sweep destinations and allowed recipients. */
  walletAml: WalletAml;
  /** Deposits from sanctioned addresses: review and release. */
  flaggedTransfers: FlaggedTransferService;
  /** Flags deposits from sanctioned addresses (the first deposit listener). */
  depositFlagger: SanctionedDepositFlagger;
}
