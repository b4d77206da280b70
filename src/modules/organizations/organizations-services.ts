import type { Platform } from '../../platform/platform';
import { OrganizationService } from './organization.service';

/** The organizations module's services (OrganizationsServices), built from what they use. */
export function createOrganizationsServices(platform: Pick<Platform, 'db'>) {
  return { organizations: new OrganizationService(platform.db) };
}
