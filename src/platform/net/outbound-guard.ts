import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { dnsResolve, Resolve } from './dns-resolve';

export type { Resolve } from './dns-resolve';

/**
 * Keeps server-side requests to caller-supplied URLs (webhooks, recovery RPC URLs) off loopback,
 * private, link-local and cloud-metadata addresses. The URL is checked when it is saved, and every
 * connection checks the addresses the name resolves to at that moment, so a DNS change cannot slip
 * past the first check. Names are resolved off the threadpool, with a time limit (`dnsResolve`),
 * unless a test supplies another resolver; a cached answer is checked as a fresh one is.
 */
export class OutboundGuard {
  constructor(
    private readonly allowPrivate: boolean,
    private readonly resolve: Resolve = dnsResolve(),
  ) {}

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
    if (isIP(host)) return this.refuseLiteral(host);
    let addresses: { address: string }[];
    try {
      addresses = await this.resolve(host);
    } catch {
      return `${host} does not resolve`;
    }
    const blocked = addresses.find((a) => !isPublicAddress(a.address));
    return blocked ? `${host} resolves to ${blocked.address}, which is not a public address` : null;
  }

  /** A reason a host written as an IP address may not be connected to (a connection makes no lookup for it), or null. */
  refuseLiteral(hostname: string): string | null {
    const host = hostname.replace(/^\[|\]$/g, '');
    if (this.allowPrivate || !isIP(host)) return null;
    return isPublicAddress(host) ? null : `${host} is not a public address`;
  }

  /** A `lookup` for net/tls connect options that refuses non-public answers. */
  readonly lookup = (hostname: string, options: object, callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    this.resolve(hostname).then((list) => {
      if (!list.length) return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), []);
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
    }, (err: NodeJS.ErrnoException) => callback(err, []));
  };
}

export function isPublicAddress(text: string): boolean {
  if (!ipaddr.isValid(text)) return false;
  let address = ipaddr.parse(text);
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()) address = (address as ipaddr.IPv6).toIPv4Address();
  return address.range() === 'unicast';
}
