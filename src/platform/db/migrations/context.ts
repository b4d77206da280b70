import type { SecretBox } from '../../crypto/secret-box';

/** What a migration that rewrites data may need besides the database. */
export interface MigrationContext {
  /** Absent where no key is configured (the test template database): a migration with rows to seal fails. */
  secretBox?: SecretBox;
}
