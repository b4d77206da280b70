/** The signing module's face: what other modules and the composition root may use. */
import type { SigningService } from './signing.service';
import type { SigningOutcomes } from './signing-outcomes';

export { SigningService } from './signing.service';
export { SigningOutcomes } from './signing-outcomes';
export { SigningRecords } from './signing-records';
export type { PlanDeps } from './signing-plans';
export { SPENDING_APPROVAL, decodeCall, spendingRefusal, transactionRisks, typedDataRisks } from './signing-checks';
export type { SpendingRefusal } from './signing-checks';
export type { RiskFinding, SigningRisk } from './signing.domain';
export type { SignatureView, SignatureFilter, SigningKind, SigningStatus, SignMessage, SignTypedData, SignTransaction } from './signing.domain';

export { createSigningServices } from './signing-services';

/** The signing module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface SigningServices {
  /** Signing with wallets' keys: messages, typed data, transactions. */
  signing: SigningService;
  /** Outcomes of held and broadcast signing requests (approval and transaction-sender listeners). */
  signingOutcomes: SigningOutcomes;
}
