import { templateDb, withAdmin } from './databases';

import type { DevChain } from '../../src/platform/chain/devchain';

export default async function globalTeardown(): Promise<void> {
  await Promise.all(((globalThis as { keelTestChains?: DevChain[] }).keelTestChains ?? []).map((c) => c.stop()));
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${templateDb()}" WITH (FORCE)`));
}
