/** The signing module's face: what other modules and the composition root may use. */
export { SigningService } from './signing.service';
export { SigningOutcomes } from './signing-outcomes';
export { SigningRecords } from './signing-records';
export type { PlanDeps } from './signing-plans';
export { SPENDING_APPROVAL, decodeCall, spendingRefusal, transactionRisks, typedDataRisks } from './signing-checks';
export type { RiskFinding, SigningRisk, SpendingRefusal } from './signing-checks';
export type { SignatureView, SignatureFilter, SigningKind, SigningStatus, SignMessage, SignTypedData, SignTransaction } from './signing.domain';
