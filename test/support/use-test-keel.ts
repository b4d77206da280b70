import type { Config } from '../../src/platform/config';
import { startTestKeelInto, TestKeel, TestKeelOptions, TestOrg } from './keel';

/**
 * One Keel for a test file: started in beforeAll with `orgs` organisations onboarded, stopped in
 * afterAll. Jest collects a file's tests before beforeAll runs, so the returned keel and orgs are
 * filled in place then: a file may destructure them at its top.
 */
export function useTestKeel(overrides: Partial<Config> = {}, opts: { orgs?: number } & TestKeelOptions = {}): { t: TestKeel; orgs: TestOrg[] } {
  const t = {} as TestKeel;
  const orgs = Array.from({ length: opts.orgs ?? 0 }, () => ({}) as TestOrg);
  beforeAll(async () => {
    await startTestKeelInto(t, overrides, opts);
    for (const org of orgs) Object.assign(org, await t.createOrg());
  });
  afterAll(() => t.stop?.());
  return { t, orgs };
}
