/**
 * The organizations module's face: what other modules may use of it. Organisations: tiers and access.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { OrganizationService } from './organization.service';

export { Tier } from './organization.domain';
export { OrganizationService } from './organization.service';
export { setMonthlyQuota } from './organization-rows';

export { createOrganizationsServices } from './organizations-services';

/** The organizations module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface OrganizationsServices {
  organizations: OrganizationService;
}
