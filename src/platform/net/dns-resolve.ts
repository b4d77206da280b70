import { LookupAddress, promises as dns } from 'node:dns';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import CacheableLookup from 'cacheable-lookup';

/** Every address a name resolves to. */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

export interface DnsResolveOptions {
  /** How long a DNS server is given to answer; the one retry is given twice as long (c-ares' `timeout`, with `tries` 2). */
  timeoutMs?: number;
  /** Names whose answers are kept (each for its TTL, at most maxTtlSeconds); when full, the oldest is dropped. */
  cacheSize?: number;
  maxTtlSeconds?: number;
  /** DNS servers asked instead of those of /etc/resolv.conf (a test's own). */
  servers?: string[];
  hostsFile?: string;
}

const DEFAULTS = { timeoutMs: 750, cacheSize: 1_000, maxTtlSeconds: 300, hostsFile: '/etc/hosts' };
const HOSTS_FILE_REREAD_MS = 5_000;

/**
 * Resolves names for outbound requests to caller-supplied hosts without libuv's threadpool:
 * dns.lookup is getaddrinfo on one of its 4 threads, so a few names whose DNS never answers would
 * hold up every other lookup, file read, pbkdf2 and zlib of the process. Here c-ares asks the DNS
 * servers (A and AAAA) and gives up after about 3 × timeoutMs; answers are kept for their TTL, and
 * concurrent lookups of one name share one query. The hosts file is read first, as getaddrinfo
 * does, because c-ares' queries do not read it.
 */
export function dnsResolve(options: DnsResolveOptions = {}): Resolve {
  const { timeoutMs, cacheSize, maxTtlSeconds, servers, hostsFile } = { ...DEFAULTS, ...options };
  const resolver = new dns.Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers) resolver.setServers(servers);
  // No fallback to dns.lookup (the threadpool) for names DNS does not know: the hosts file answers those.
  const cache = new CacheableLookup({ resolver, cache: new BoundedMap(cacheSize), maxTtl: maxTtlSeconds, lookup: false, fallbackDuration: 0 });
  const hosts = hostsTable(hostsFile);
  return async (hostname) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    const family = isIP(name);
    if (family) return [{ address: name, family }];
    const listed = hosts().get(name);
    if (listed) return listed;
    try {
      return (await cache.lookupAsync(name, { all: true })).map(({ address, family }) => ({ address, family }));
    } catch (error) {
      throw readable(error as NodeJS.ErrnoException, name);
    }
  };
}

function readable(error: NodeJS.ErrnoException, name: string): NodeJS.ErrnoException {
  if (error.code === 'ETIMEOUT') return Object.assign(new Error(`DNS lookup of ${name} timed out`), { code: 'ETIMEOUT' });
  if (error.code === 'ENOTFOUND') return Object.assign(new Error(`${name} does not resolve`), { code: 'ENOTFOUND' });
  return error;
}

/**
 * The hosts file's names, read again when older than HOSTS_FILE_REREAD_MS. Read synchronously: a
 * small local file, and an asynchronous read would queue on the threadpool this module keeps free.
 */
function hostsTable(path: string): () => Map<string, LookupAddress[]> {
  let table = new Map<string, LookupAddress[]>();
  let readAt = -Infinity;
  return () => {
    if (Date.now() - readAt < HOSTS_FILE_REREAD_MS) return table;
    readAt = Date.now();
    try {
      table = parseHosts(readFileSync(path, 'utf8'));
    } catch {
      table = new Map();
    }
    return table;
  };
}

export function parseHosts(text: string): Map<string, LookupAddress[]> {
  const table = new Map<string, LookupAddress[]>();
  for (const line of text.split('\n')) {
    const [address = '', ...names] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = isIP(address);
    if (!family) continue;
    for (const name of names.map((n) => n.toLowerCase())) table.set(name, [...(table.get(name) ?? []), { address, family }]);
  }
  return table;
}

/** cacheable-lookup's cache, bounded: when full, the entry stored first is dropped. */
class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly capacity: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.capacity) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
