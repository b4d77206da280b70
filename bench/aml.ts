import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { SanctionsScreen } from '../src/modules/aml/sanctions-screen';
import { shippedSanctionsSnapshot } from '../src/modules/aml/sanctions-files';
import { createBenchOrganization, freshDatabase, keelCli, LoadRun, loadRun, median, medianRun, startKeelProcess, stopProcess } from './support';

/** A mix as a screening service sees it: 1 in 10 listed (in mixed case for EVM), the rest unlisted EVM and Bitcoin-style addresses. */
function sampleAddresses(listed: string[], n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 10 === 0) {
      const a = listed[i % listed.length];
      out.push(a.startsWith('0x') ? (i % 20 === 0 ? a.toLowerCase() : `0x${a.slice(2).toUpperCase()}`) : a);
    } else if (i % 3 === 0) out.push(`1${randomBytes(16).toString('base64url').slice(0, 33)}`);
    else out.push(`0x${randomBytes(20).toString('hex')}`);
  }
  return out;
}

/** A port nothing listens on now (the machine is shared: a fixed port may be another process's). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Screens `count` addresses (cycling through `sample`) and returns addresses per second. */
function screenRate(screen: SanctionsScreen, sample: string[], count: number): { perSecond: number; sanctioned: number } {
  let sanctioned = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) if (screen.screen(sample[i % sample.length]).sanctioned) sanctioned++;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { perSecond: Math.round(count / seconds), sanctioned };
}

/**
 * AML screening. In process: SanctionsScreen.screen (normalise, one hashed Map lookup, the result
 * object) against the full shipped OFAC snapshot, `count` addresses per run, median of the runs.
 * Over HTTP: POST /v1/aml/check-batch with 1 and with 50 addresses at 50 connections, against a
 * Keel running the api role in its own process (auth, rate limit counted in Redis, the REST shim,
 * a GraphQL execution per request).
 * Arguments: seconds per HTTP run (10), runs (3), addresses per in-process run (5,000,000).
 */
export async function run(args: string[]): Promise<object> {
  const seconds = Number(args[0] ?? 10);
  const runs = Number(args[1] ?? 3);
  const count = Number(args[2] ?? 5_000_000);

  const snapshot = shippedSanctionsSnapshot();
  const screen = new SanctionsScreen(snapshot);
  const listed = snapshot.lists.flatMap((l) => l.addresses);
  const sample = sampleAddresses(listed, 100_000);
  screenRate(screen, sample, 1_000_000); // warm-up (JIT)
  const inProcess = Array.from({ length: runs }, () => screenRate(screen, sample, count));

  const port = await freePort();
  const env = {
    DEV_CHAIN_PORT: '0',
    DATABASE_URL: await freshDatabase('keel_bench_aml'),
    REDIS_PREFIX: 'keelbench:aml:',
    CORE_PORT: String(port),
    HOST: '127.0.0.1',
    KEEL_ROLES: 'api',
    RATE_LIMIT_SCALE: '100000',
  };
  keelCli(['migrate'], env);
  const org = createBenchOrganization(env);
  const headers = { apiKey: org.adminKey, orgId: org.orgId, 'content-type': 'application/json' };
  const url = `http://127.0.0.1:${port}/v1/aml/check-batch`;
  const body = (n: number) => JSON.stringify({ addresses: sample.slice(0, n) });
  const post = (n: number, duration: number) => loadRun({ url, method: 'POST', body: body(n), headers, connections: 50, duration });
  const child = await startKeelProcess(env, `http://127.0.0.1:${port}/ready`);
  try {
    await post(50, 3); // warm-up
    const http: Record<string, LoadRun[]> = { '1': [], '50': [] };
    for (let i = 0; i < runs; i++) for (const n of [1, 50]) http[n].push(await post(n, seconds));
    const failed = Object.values(http).flat().filter((r) => r.non2xx > 0 || r.errors > 0);
    if (failed.length) throw new Error(`${failed.length} run(s) had non-2xx answers or errors: ${JSON.stringify(failed)}`);
    const summary = (n: number) => ({ ...medianRun(http[n], 'requestsPerSecond'), addressesPerSecond: Math.round(median(http[n].map((r) => r.perSecond)) * n), runs: http[n] });
    return {
      benchmark: 'aml',
      list: { source: snapshot.source, listDate: snapshot.listDate, addresses: screen.info().addressCount },
      inProcess: {
        what: 'SanctionsScreen.screen, 1 in 10 addresses listed (EVM in mixed case), median of runs',
        addressesPerRun: count,
        runs: inProcess.map((r) => r.perSecond),
        median: { addressesPerSecond: median(inProcess.map((r) => r.perSecond)) },
        target: { addressesPerSecond: 1_000_000 },
      },
      http: {
        what: 'POST /v1/aml/check-batch (core host, authenticated), 50 connections',
        secondsPerRun: seconds,
        oneAddress: summary(1),
        fiftyAddresses: summary(50),
      },
    };
  } finally {
    await stopProcess(child);
  }
}
