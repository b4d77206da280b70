import type { Platform } from '../../platform/platform';
import { QuotaService } from './quota.service';

/** The quotas module's services (QuotasServices), built from what they use. */
export function createQuotasServices(platform: Pick<Platform, 'db' | 'quota'>) {
  return { quotas: new QuotaService(platform.db, platform.quota) };
}
