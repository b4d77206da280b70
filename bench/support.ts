import autocannon from 'autocannon';
import { ChildProcess, spawn } from 'node:child_process';
import { createServer, IncomingMessage } from 'node:http';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

export const ROOT = join(__dirname, '..', '..');
/** The Keel build a benchmark starts (`keel migrate`, `keel org create`, `keel start`): this one, or BENCH_KEEL_ROOT's (another checkout, built), to measure two builds alternately. */
export const KEEL_ROOT = process.env.BENCH_KEEL_ROOT ?? ROOT;

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The p-th percentile of sorted values (the value at that rank). */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Numbers in [0, 1) from a 32-bit seed (mulberry32): the same sequence on every invocation. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A server under load made of several processes: `processes` are the server's own (their CPU and
 * memory are its figures); `beside` are the pids of processes beside it on the machine (a dev
 * chain's, which a deployment runs elsewhere). What runs beside, and every process the server's
 * processes started (the sandbox's dev chain, Hardhat's node, is a child of Keel's), count in the
 * machine's CPU only.
 */
export interface BenchServer {
  processes: ChildProcess[];
  beside: number[];
}

/** One autocannon run, as every HTTP benchmark reports it. */
export interface LoadRun {
  perSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** The watched server's largest resident set during the run (its processes' together), in MB (sampled every 100 ms). */
  peakRssMb?: number;
  /** The watched server's CPU time (all its processes and threads, user and system) per answered request, in µs. */
  cpuMicrosPerRequest?: number;
  /** The watched server's CPU while idle, in the second before the run: its background (pollers, timers, settlement's work), in ms a second. */
  idleCpuMillisPerSecond?: number;
  /** cpuMicrosPerRequest less the idle rate over the run's time: what the requests themselves cost the server, the background apart. */
  cpuMicrosPerRequestNetOfIdle?: number;
  /** All PostgreSQL and all Redis server processes' CPU time during the run per answered request, in µs (the machine's, so other users' load counts too). */
  postgresCpuMicrosPerRequest?: number;
  /** With `database`: the CPU time of the PostgreSQL backends connected to that database only, per answered request, in µs (other users' queries excluded). */
  databaseCpuMicrosPerRequest?: number;
  redisCpuMicrosPerRequest?: number;
  /** The load generator's (this process's) CPU per answered request, in µs. */
  loadGeneratorCpuMicrosPerRequest?: number;
  /** With several server processes: each one's CPU per answered request, in µs, in the server's order. */
  cpuMicrosPerRequestByProcess?: number[];
  /** The CPU of the processes beside the server and those it started (a dev chain) per answered request, in µs. */
  besideCpuMicrosPerRequest?: number;
  /** All of the above together (the server's, PostgreSQL's, Redis's, the load generator's, what runs beside the server): what an answered request costs the machine, in µs. */
  machineCpuMicrosPerRequest?: number;
  /** How many of the machine's cores that kept busy on average (machine CPU per request × rate). */
  coresBusy?: number;
}

/** A process's resident set in MB (Linux /proc; `field` VmHWM for its peak since it started), undefined where unreadable. */
export function residentMb(pid: number | undefined, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/** Linux's clock ticks per second, the unit of /proc/<pid>/stat's CPU times; asked once, when first needed. */
let clockTicks: number | undefined;
function clockTicksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * A process's CPU time so far in µs from /proc (user and system, all threads; with `endedChildren`,
 * also that of its children that have ended and been waited for). Throws where unreadable.
 */
function statMicros(pid: number | string, endedChildren: boolean): number {
  // The fields after the command name (which may hold spaces) start at state; utime, stime, cutime and cstime are the 12th to 15th of them.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]) + (endedChildren ? Number(fields[13]) + Number(fields[14]) : 0);
  return (ticks * 1e6) / clockTicksPerSecond();
}

/** A process's CPU time so far (user and system, all threads) in µs, from /proc; undefined where unreadable. */
export function cpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return statMicros(pid, false);
  } catch {
    return undefined;
  }
}

/**
 * The CPU time so far of every process whose command is `command` (all PostgreSQL's backends, say),
 * in µs, with that of their children that have ended (a closed connection's backend is counted in
 * its parent's, so the total never falls when one ends).
 */
export function commandCpuMicros(command: string): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === command) total += statMicros(pid, true);
    } catch {
      // the process ended
    }
  }
  return total;
}

/**
 * The CPU time so far of each PostgreSQL backend connected to the database, by pid (from
 * pg_stat_activity and /proc): on a shared machine, the benchmark's own database work apart from
 * everyone else's.
 */
async function databaseBackendMicros(databaseUrl: string): Promise<Map<number, number>> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    const micros = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        micros.set(pid, statMicros(pid, false));
      } catch {
        // the backend ended
      }
    }
    return micros;
  } finally {
    await client.end();
  }
}

/**
 * Runs the load; with `server`, also samples its processes' resident set for the run's peak and
 * takes their CPU time per answered request: a figure the machine's noise moves less than the rate,
 * since a neighbour that steals time slows the server without making its requests cost more.
 */
export async function loadRun(options: autocannon.Options, server?: ChildProcess | BenchServer, databaseUrl?: string): Promise<LoadRun> {
  const watched = server === undefined ? undefined : 'processes' in server ? server : { processes: [server], beside: [] };
  let peak: number | undefined;
  const sample = () => {
    const mb = watched && sumOver(watched.processes, (p) => residentMb(p.pid));
    if (mb !== undefined) peak = Math.max(peak ?? 0, mb);
  };
  const sampler = watched ? setInterval(sample, 100) : undefined;
  const idle = watched && (await idleCpuMillisPerSecond(watched.processes));
  const cpuBefore = watched && serverCpuMicros(watched);
  const startedAt = performance.now();
  const backingBefore = watched && backingCpuMicros();
  const databaseBefore = databaseUrl ? await databaseBackendMicros(databaseUrl) : undefined;
  const generatorBefore = process.cpuUsage();
  try {
    const r = await autocannon(options);
    sample();
    // A backend that started during the run counts whole; one that ended is lost (pooled connections live on).
    const databaseAfter = databaseUrl ? await databaseBackendMicros(databaseUrl) : undefined;
    const cpuAfter = watched && serverCpuMicros(watched);
    const seconds = (performance.now() - startedAt) / 1000;
    const backingAfter = backingBefore && backingCpuMicros();
    const generator = process.cpuUsage(generatorBefore);
    const answered = r.requests.total;
    const run: LoadRun = { perSecond: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors, ...(peak === undefined ? {} : { peakRssMb: peak }) };
    if (answered > 0 && databaseBefore && databaseAfter) {
      let spent = 0;
      for (const [pid, after] of databaseAfter) spent += after - (databaseBefore.get(pid) ?? 0);
      run.databaseCpuMicrosPerRequest = Math.round(spent / answered);
    }
    if (answered > 0 && cpuBefore && cpuAfter && backingBefore && backingAfter) {
      const byProcess = cpuAfter.own.map((after, i) => (after - cpuBefore.own[i]) / answered);
      const own = byProcess.reduce((a, b) => a + b, 0);
      const beside = (cpuAfter.beside - cpuBefore.beside) / answered;
      const postgres = (backingAfter.postgres - backingBefore.postgres) / answered;
      const redis = (backingAfter.redis - backingBefore.redis) / answered;
      const loadGenerator = (generator.user + generator.system) / answered;
      const machine = own + beside + postgres + redis + loadGenerator;
      Object.assign(run, {
        cpuMicrosPerRequest: Math.round(own),
        ...(idle !== undefined && { idleCpuMillisPerSecond: Math.round(idle), cpuMicrosPerRequestNetOfIdle: Math.round(own - (idle * 1000 * seconds) / answered) }),
        postgresCpuMicrosPerRequest: Math.round(postgres),
        redisCpuMicrosPerRequest: Math.round(redis),
        loadGeneratorCpuMicrosPerRequest: Math.round(loadGenerator),
        ...(byProcess.length > 1 && { cpuMicrosPerRequestByProcess: byProcess.map(Math.round) }),
        besideCpuMicrosPerRequest: Math.round(beside),
        machineCpuMicrosPerRequest: Math.round(machine),
        coresBusy: Math.round((machine * run.perSecond) / 1e4) / 100,
      });
    }
    return run;
  } finally {
    clearInterval(sampler);
  }
}

/**
 * The CPU so far of each of a server's processes, and of everything beside it: the processes beside
 * and every descendant of the server's and of those (ended children included); undefined where a
 * server process is unreadable.
 */
function serverCpuMicros(server: BenchServer): { own: number[]; beside: number } | undefined {
  const own = server.processes.map((p) => cpuMicros(p.pid));
  if (own.some((v) => v === undefined)) return undefined;
  const roots = [...server.processes.map((p) => p.pid!), ...server.beside];
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      parents.set(Number(entry), Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]));
    } catch {
      // the process ended
    }
  }
  const descends = (pid: number): boolean => {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) if (roots.includes(p)) return true;
    return false;
  };
  let beside = 0;
  for (const pid of parents.keys()) {
    if (!server.beside.includes(pid) && !descends(pid)) continue;
    try {
      beside += statMicros(pid, true);
    } catch {
      // the process ended
    }
  }
  return { own: own as number[], beside };
}

/** The sum of a figure over processes; undefined if any is unreadable (or there are none). */
function sumOver(processes: ChildProcess[], figure: (p: ChildProcess) => number | undefined): number | undefined {
  let total = 0;
  for (const p of processes) {
    const value = figure(p);
    if (value === undefined) return undefined;
    total += value;
  }
  return processes.length ? total : undefined;
}

/** A server's CPU (its processes' together) over one idle second, in ms a second; undefined where unreadable. */
async function idleCpuMillisPerSecond(processes: ChildProcess[]): Promise<number | undefined> {
  const before = sumOver(processes, (p) => cpuMicros(p.pid));
  const from = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = sumOver(processes, (p) => cpuMicros(p.pid));
  return before === undefined || after === undefined ? undefined : (after - before) / (performance.now() - from);
}

/** The CPU so far of the servers behind every benchmark: all of PostgreSQL's processes and all of Redis's. */
function backingCpuMicros(): { postgres: number; redis: number } {
  return { postgres: commandCpuMicros('postgres'), redis: commandCpuMicros('redis-server') };
}

const CPU_FIELDS = ['cpuMicrosPerRequest', 'idleCpuMillisPerSecond', 'cpuMicrosPerRequestNetOfIdle', 'postgresCpuMicrosPerRequest', 'databaseCpuMicrosPerRequest', 'redisCpuMicrosPerRequest', 'loadGeneratorCpuMicrosPerRequest', 'besideCpuMicrosPerRequest', 'machineCpuMicrosPerRequest', 'coresBusy'] as const;
type CpuField = (typeof CPU_FIELDS)[number];

/** Medians over runs; `rateName` names the rate (requestsPerSecond, ordersPerSecond). */
export function medianRun<K extends string>(runs: LoadRun[], rateName: K): Record<K | 'latencyP50Ms' | 'latencyP99Ms', number> & Pick<LoadRun, 'peakRssMb' | CpuField | 'cpuMicrosPerRequestByProcess'> {
  const rss = runs.map((r) => r.peakRssMb).filter((v): v is number => v !== undefined);
  const measured = (field: CpuField) => runs.map((r) => r[field]).filter((v): v is number => v !== undefined);
  const medians = Object.fromEntries(CPU_FIELDS.flatMap((field) => (measured(field).length ? [[field, median(measured(field))]] : [])));
  const byProcess = runs.map((r) => r.cpuMicrosPerRequestByProcess).filter((v): v is number[] => v !== undefined);
  return {
    [rateName]: median(runs.map((r) => r.perSecond)),
    latencyP50Ms: median(runs.map((r) => r.p50)),
    latencyP99Ms: median(runs.map((r) => r.p99)),
    ...(rss.length ? { peakRssMb: Math.max(...rss) } : {}),
    ...medians,
    ...(byProcess.length && { cpuMicrosPerRequestByProcess: byProcess[0].map((_, i) => median(byProcess.map((b) => b[i]))) }),
  } as Record<K | 'latencyP50Ms' | 'latencyP99Ms', number> & Pick<LoadRun, 'peakRssMb' | CpuField | 'cpuMicrosPerRequestByProcess'>;
}

/**
 * Keel against its yardstick, run for run (each Keel run with the yardstick run just after it):
 * the ratio of the rates and of the p99 latencies, each run's and their medians.
 */
export function ratioToYardstick(keel: LoadRun[], yardstick: LoadRun[]): { rate: number; p99: number; rateRuns: number[]; p99Runs: number[] } {
  const round = (x: number) => Math.round(x * 100) / 100;
  const rateRuns = keel.map((k, i) => round(k.perSecond / yardstick[i].perSecond));
  const p99Runs = keel.map((k, i) => round(k.p99 / Math.max(1, yardstick[i].p99)));
  return { rate: median(rateRuns), p99: median(p99Runs), rateRuns, p99Runs };
}

/**
 * How many times the other server's CPU per request Keel spends, run for run (medians of the runs'
 * ratios): its process's own, or with `machineCpuMicrosPerRequest` the machine's (database, Redis and
 * load generator included).
 */
export function cpuRatio(keel: LoadRun[], other: LoadRun[], field: 'cpuMicrosPerRequest' | 'machineCpuMicrosPerRequest' = 'cpuMicrosPerRequest'): number | undefined {
  const ratios = keel.flatMap((k, i) => (k[field] && other[i]?.[field] ? [k[field]! / other[i][field]!] : []));
  return ratios.length ? Math.round(median(ratios) * 100) / 100 : undefined;
}

export async function freshDatabase(name: string, server = 'postgres://postgres@127.0.0.1:5432'): Promise<string> {
  const client = new Client({ connectionString: `${server}/postgres` });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await client.end();
  return `${server}/${name}`;
}

/** Runs the built `keel` CLI in its own process, so the load generator does not share its event loop. */
export function keelCli(args: string[], env: NodeJS.ProcessEnv): string {
  return execFileSync(process.execPath, [join(KEEL_ROOT, 'bin', 'keel.js'), ...args], { env: { ...process.env, ...env }, encoding: 'utf8' });
}

export interface BenchOrganization {
  orgId: string;
  adminKey: string;
  proKey: string;
}

/** A Business-tier organisation made the way an operator makes one: `keel org create`. */
export function createBenchOrganization(env: NodeJS.ProcessEnv): BenchOrganization {
  return JSON.parse(keelCli(['org', 'create', '--name', 'bench', '--tier', 'Business', '--json'], env));
}

export function startKeelProcess(env: NodeJS.ProcessEnv, readyUrl: string): Promise<ChildProcess> {
  return startNodeProcess([join(KEEL_ROOT, 'bin', 'keel.js'), 'start'], env, readyUrl);
}

/** Starts a Node.js script in its own process (profiled when BENCH_CPU_PROF names a folder) and waits until readyUrl answers, asking every `pollMs`. */
export async function startNodeProcess(args: string[], env: NodeJS.ProcessEnv, readyUrl: string, pollMs = 200): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []), ...args], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(readyUrl)).ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
  child.kill('SIGKILL');
  throw new Error(`${args[0]} did not become ready at ${readyUrl}`);
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });
}

/**
 * A yardstick's whole HTTP layer: bare node:http on loopback, `/ready` for startNodeProcess, every
 * other request answered with `answer`'s status and JSON body (500 if it fails). Exits on SIGTERM.
 */
export function serveJson(port: number, answer: (req: IncomingMessage) => Promise<{ status: number; body: unknown }>): void {
  createServer((req, res) => {
    if (req.url === '/ready') {
      res.end('ok');
      return;
    }
    answer(req)
      .then(({ status, body }) => {
        const text = JSON.stringify(body);
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      })
      .catch(() => {
        res.writeHead(500);
        res.end();
      });
  }).listen(port, '127.0.0.1');
  process.on('SIGTERM', () => process.exit(0));
}

/** A JSON call that throws on a non-2xx answer. */
export async function callJson(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const res = await fetch(url, { method, headers: { ...headers, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/**
 * How a trading benchmark runs Keel. `one-process`: every role in one process with its dev chain in
 * it (the sandbox's `keel start`). `order-book-node`: as the operator's guide lays out a deployment
 * that trades, the pro host on an order-book node of its own (`--roles orderbook`), the core host and
 * the worker on another (`--roles api,worker`), and the dev chain in a process of its own standing in
 * for the chain's node (beside Keel: its CPU counts in the machine's, not Keel's).
 */
export type KeelLayout = 'one-process' | 'order-book-node';

/** A trading benchmark's Keel, migrated, with a Business organisation and the first chain. */
export interface TradingBench {
  env: Record<string, string>;
  /** Keel's processes (and the dev chain's, beside them, in the order-book-node layout). */
  server: BenchServer;
  /** The process serving the pro host. */
  proNode: ChildProcess;
  org: BenchOrganization;
  coreHeaders: Record<string, string>;
  proHeaders: Record<string, string>;
  coreUrl: string;
  proUrl: string;
  chain: { id: string };
  stop(): Promise<void>;
}

export async function startTradingBench(name: string, core: number, pro: number, chainId: number, layout: KeelLayout = 'one-process'): Promise<TradingBench> {
  const env = await tradingBenchEnv(name, core, pro, chainId);
  const started: ChildProcess[] = [];
  const stops: (() => Promise<void>)[] = [];
  // Keel's processes first, then the chains they use.
  const stop = async () => {
    await Promise.all(started.map(stopProcess));
    await Promise.all(stops.map((s) => s()));
  };
  try {
    let server: BenchServer;
    let proNode: ChildProcess;
    if (layout === 'one-process') {
      keelCli(['migrate'], env);
      proNode = await startKeelProcess(env, `http://127.0.0.1:${pro}/ready`);
      started.push(proNode);
      server = { processes: [proNode], beside: [] };
    } else {
      // Loaded here: the yardsticks' servers import this file and must not load Keel's chain modules.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { startBenchChains }: typeof import('./bench-chains') = require('./bench-chains');
      const chains = await startBenchChains(env, env.KEEL_DATA_DIR);
      stops.push(chains.stop);
      Object.assign(env, { KEEL_CHAINS: chains.keelChains, KEEL_MASTER_KEY: randomBytes(32).toString('hex') });
      keelCli(['migrate'], env);
      const hub = await startKeelProcess({ ...env, KEEL_ROLES: 'api,worker', KEEL_NODE_ID: `bench-${name}-hub` }, `http://127.0.0.1:${core}/ready`);
      started.push(hub);
      proNode = await startKeelProcess({ ...env, KEEL_ROLES: 'orderbook', KEEL_NODE_ID: `bench-${name}-orderbook` }, `http://127.0.0.1:${pro}/ready`);
      started.push(proNode);
      server = { processes: [proNode, hub], beside: chains.pids };
    }
    const org = createBenchOrganization(env);
    const coreHeaders = { apiKey: org.adminKey, orgId: org.orgId };
    const coreUrl = `http://127.0.0.1:${core}`;
    const [chain] = (await callJson(`${coreUrl}/v1/blockchains`, 'GET', coreHeaders)).data;
    return { env, server, proNode, org, coreHeaders, proHeaders: { apiKey: org.proKey, orgId: org.orgId }, coreUrl, proUrl: `http://127.0.0.1:${pro}`, chain, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * The environment of a trading benchmark's Keel: its own database, Redis prefix, ports and dev chain.
 * Chains are polled at Keel's default interval: a shorter one only hastens the setup's deposits, and
 * its background CPU would be charged to every request measured.
 */
async function tradingBenchEnv(name: string, core: number, pro: number, chainId: number): Promise<Record<string, string>> {
  return {
    DATABASE_URL: await freshDatabase(`keel_bench_${name}`),
    REDIS_PREFIX: `keelbench:${name}:`,
    CORE_PORT: String(core),
    PRO_PORT: String(pro),
    HOST: '127.0.0.1',
    RATE_LIMIT_SCALE: '100000',
    // The realtime benchmark's subscribers (1,000 by default) are connections of one key.
    WS_MAX_CONNECTIONS_PER_KEY: '100000',
    WS_MAX_CONNECTIONS_PER_ORGANIZATION: '100000',
    DEV_CHAIN_IDS: String(chainId),
    DEV_CHAIN_PORT: '0',
    // The markets traded are on the EVM dev chain; the sandbox's Solana network would only add its slots' work.
    DEV_SOLANA: 'false',
    KEEL_DATA_DIR: `.keel/bench-${name}`,
  };
}

/**
 * Moves `amount` of `symbol` from the wallet's address into its trading balance (an on-chain deposit
 * into the settlement contract, its gas paid by the wallet) and waits until it is tradable
 * (CONFIRMED). The deposit is refused until the deposit watcher has credited the faucet's transfer
 * (and the settlement contract is deployed): asked again, for at most two minutes.
 */
export async function intoTrading(bench: Pick<TradingBench, 'coreUrl' | 'proUrl' | 'coreHeaders' | 'proHeaders' | 'chain'>, walletId: string, symbol: string, amount: string): Promise<void> {
  const [asset] = (await callJson(`${bench.coreUrl}/v1/assets?blockchainId=${bench.chain.id}&symbol=${symbol}`, 'GET', bench.coreHeaders)).data;
  const deadline = Date.now() + 120_000;
  const pause = () => new Promise((r) => setTimeout(r, 200));
  let transferId: string | undefined;
  while (!transferId) {
    const res = await fetch(`${bench.proUrl}/v1/orderbook/wallets/${walletId}/trading/deposits`, { method: 'POST', headers: { ...bench.proHeaders, 'content-type': 'application/json' }, body: JSON.stringify({ assetId: asset.id, amount }) });
    const json = (await res.json()) as { data?: { id: string } };
    if (res.status === 201) transferId = json.data!.id;
    else if (Date.now() > deadline) throw new Error(`deposit to trading of ${amount} ${symbol}: ${res.status} ${JSON.stringify(json)}`);
    else await pause();
  }
  for (;;) {
    const { status } = (await callJson(`${bench.proUrl}/v1/orderbook/trading-transfers/${transferId}`, 'GET', bench.proHeaders)).data;
    if (status === 'CONFIRMED') return;
    if (status === 'FAILED' || Date.now() > deadline) throw new Error(`deposit to trading of ${amount} ${symbol}: ${status}`);
    await pause();
  }
}

