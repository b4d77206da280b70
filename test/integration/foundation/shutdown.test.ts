import { useTestKeel } from '../../support/use-test-keel';
import { startKeelProcess } from '../../support/keel-process';

const { t } = useTestKeel({ KEEL_ROLES: 'api' });

test('`keel start` on SIGTERM answers the requests in flight, then exits 0 promptly', async () => {
  const org = await t.createOrg();
  // Budgets scaled up: 200 requests at once test draining, not rate limits.
  const { child, coreUrl } = await startKeelProcess(t.config, 'api,worker', { RATE_LIMIT_SCALE: '100' });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const inFlight = Array.from({ length: 200 }, () => fetch(`${coreUrl}/v1/api-keys`, { headers: { apiKey: org.adminKey, orgId: org.orgId } }).then((r) => r.status));
  await Promise.race(inFlight); // the server is busy answering
  const signalledAt = Date.now();
  child.kill('SIGTERM');
  const outcomes = await Promise.allSettled(inFlight);
  expect(await exited).toBe(0);
  expect(Date.now() - signalledAt).toBeLessThan(5_000);
  // Requests already being served finish with 200; ones that arrive after the signal get 503 or no connection.
  const answered = outcomes.filter((o): o is PromiseFulfilledResult<number> => o.status === 'fulfilled').map((o) => o.value);
  expect(answered).toContain(200);
  for (const status of answered) expect([200, 503]).toContain(status);
});
