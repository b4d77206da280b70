import ipaddr from 'ipaddr.js';

/**
 * The key a client's budget is counted under: an IPv4 address as it is (an IPv4-mapped IPv6 address
 * counts as its IPv4 address), an IPv6 address by its /64 network, which is what one subscriber
 * line or host is given (each host may pick any address within it). Anything else as it is.
 */
export function clientKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}

/** Names proxy-addr (Fastify's trustProxy) accepts for the ranges it knows. */
const RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY as Fastify's `trustProxy` takes it: off (empty, `false`, `off`), or the proxies' addresses
 * and CIDR ranges (comma-separated; also `loopback`, `linklocal`, `uniquelocal`). A request from one of
 * them is taken to come from the address its X-Forwarded-For names (skipping trusted proxies from the
 * right). `true` (any sender's X-Forwarded-For) and a hop count are refused: neither checks that the
 * peer is the proxy, so any client could name its own address and dodge its budget.
 */
export function parseTrustProxy(text: string): false | string[] {
  const value = text.trim().toLowerCase();
  if (value === '' || value === 'false' || value === 'off') return false;
  if (value === 'true' || /^\d+$/.test(value)) throw new Error("name the proxies' addresses or CIDR ranges: 'true' or a hop count would trust any client's X-Forwarded-For");
  const entries = value.split(',').map((e) => e.trim()).filter(Boolean);
  for (const entry of entries) {
    if (!RANGE_NAMES.includes(entry) && !ipaddr.isValid(entry) && !ipaddr.isValidCIDR(entry)) {
      throw new Error(`'${entry}' is not an IP address, a CIDR range or one of ${RANGE_NAMES.join(', ')}`);
    }
  }
  return entries;
}
