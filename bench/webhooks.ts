import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDb } from '../src/platform/db/knex';
import { Outbox } from '../src/platform/events/outbox';
import { createBenchOrganization, freshDatabase, keelCli, median, startKeelProcess, stopProcess } from './support';

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

/**
 * End-to-end webhook delivery: outbox rows are committed at a steady rate (batches of `batch`
 * every 10 ms) into a Keel running the api and worker roles in its own process; a receiver on
 * loopback answers 200. Lag is receipt time minus the event's timestamp (set when it was
 * published, just before commit). Throughput is deliveries over the span from first publish to
 * last receipt. Each run publishes `events` events; the figures are medians over the runs.
 */
export async function run(args: string[]): Promise<object> {
  const events = Number(args[0] ?? 10_000);
  const ratePerSecond = Number(args[1] ?? 2_500);
  const runs = Number(args[2] ?? 3);
  const port = 4910;
  const env = {
    DATABASE_URL: await freshDatabase('keel_bench_webhooks'),
    REDIS_PREFIX: 'keelbench:webhooks:',
    CORE_PORT: String(port),
    HOST: '127.0.0.1',
    KEEL_ROLES: 'api,worker',
    WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
  };
  keelCli(['migrate'], env);
  const org = createBenchOrganization(env);

  const receipts = new Map<string, number>();
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const id = req.headers['webhook-id'] as string;
      if (!receipts.has(id)) receipts.set(id, at);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const child = await startKeelProcess(env, `http://127.0.0.1:${port}/ready`);
  const db = createDb(env.DATABASE_URL, 4);
  const outbox = new Outbox('sandbox');
  try {
    const created = await fetch(`http://127.0.0.1:${port}/v1/webhooks`, {
      method: 'POST',
      headers: { apiKey: org.adminKey, orgId: org.orgId, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiverUrl, name: 'bench', eventTypes: ['*'] }),
    });
    if (created.status !== 201) throw new Error(`creating the subscription failed: ${created.status} ${await created.text()}`);

    const results = [];
    for (let r = 0; r < runs + 1; r++) {
      const n = r === 0 ? Math.min(events, 2_000) : events; // the first run warms up
      receipts.clear();
      const published = new Map<string, number>();
      const batch = Math.max(1, Math.round(ratePerSecond / 100));
      const started = Date.now();
      for (let sent = 0; sent < n; sent += batch) {
        const due = started + (sent / ratePerSecond) * 1000;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const inputs = Array.from({ length: Math.min(batch, n - sent) }, (_, k) => ({ organizationId: org.orgId, type: 'master.updated', data: { i: sent + k } }));
        for (const envelope of await outbox.publishMany(db, inputs)) published.set(envelope.id, Date.parse(envelope.timestamp));
      }
      const deadline = Date.now() + 120_000;
      while (receipts.size < n && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      if (r === 0) continue;
      const lags = [...published].map(([id, at]) => (receipts.get(id) ?? NaN) - at).filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
      const last = Math.max(...receipts.values());
      results.push({
        events: n,
        delivered: receipts.size,
        deliveriesPerSec: Math.round(receipts.size / ((last - started) / 1000)),
        lagP50Ms: percentile(lags, 50),
        lagP99Ms: percentile(lags, 99),
      });
    }
    const rate = median(results.map((x) => x.deliveriesPerSec));
    const p99 = median(results.map((x) => x.lagP99Ms));
    return {
      benchmark: 'webhooks',
      what: 'outbox row committed -> receiver got the signed POST (api+worker roles in one Keel process, receiver on loopback)',
      offeredRatePerSec: ratePerSecond,
      runs: results,
      median: { deliveriesPerSec: rate, lagP50Ms: median(results.map((x) => x.lagP50Ms)), lagP99Ms: p99 },
      target: { deliveriesPerSec: 2_000, lagP99Ms: 1_000 },
      meetsTarget: rate >= 2_000 && p99 < 1_000,
    };
  } finally {
    await db.destroy();
    await stopProcess(child);
    receiver.close();
  }
}
