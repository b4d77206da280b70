/**
 * The quotas module's face: what other modules may use of it. Each organisation's monthly request quota and its usage.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { QuotaService } from './quota.service';

export { createQuotasServices } from './quotas-services';

/** The quotas module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface QuotasServices {
  /** Each organisation's month of requests against its quota, and the operator's quotas. */
  quotas: QuotaService;
}
