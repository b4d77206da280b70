import { templateDb, withAdmin } from './databases';

export default async function globalTeardown(): Promise<void> {
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${templateDb()}" WITH (FORCE)`));
}
