import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Keeps server-side requests to caller-supplied URLs (webhooks) off loopback, private, link-local
 * and cloud-metadata addresses. The URL is checked when it is saved, and every connection checks
 * the addresses the name resolves to at that moment, so a DNS change cannot slip past the first check.
 */
export class OutboundGuard {
  constructor(private readonly allowPrivate: boolean) {}

  /** A reason the URL may not be used, or null when it may. */
  async refuseUrl(raw: string): Promise<string | null> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return 'must be an absolute URL';
    }
    if (url.username || url.password) return 'must not carry credentials';
    if (this.allowPrivate) return url.protocol === 'https:' || url.protocol === 'http:' ? null : 'must use https';
    if (url.protocol !== 'https:') return 'must use https';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) return isPublicAddress(host) ? null : `${host} is not a public address`;
    let addresses: { address: string }[];
    try {
      addresses = await dns.lookup(host, { all: true });
    } catch {
      return `${host} does not resolve`;
    }
    const blocked = addresses.find((a) => !isPublicAddress(a.address));
    return blocked ? `${host} resolves to ${blocked.address}, which is not a public address` : null;
  }

  /** A `lookup` for net/tls connect options that refuses non-public answers. */
  readonly lookup = (hostname: string, options: object, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      if (!this.allowPrivate) {
        const blocked = list.find((a) => !isPublicAddress(a.address));
        if (blocked) {
          const error: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${blocked.address}, which is not a public address`);
          error.code = 'EADDRNOTPUBLIC';
          return callback(error, []);
        }
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

export function isPublicAddress(text: string): boolean {
  if (!ipaddr.isValid(text)) return false;
  let address = ipaddr.parse(text);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address();
  return address.range() === 'unicast';
}
