import { ethers } from 'ethers';
import type { RpcTransport } from '@solana/kit';
import type { GuardedHttp } from './guarded-http';
import { urlOrigin } from './rpc-url';

/**
 * An ethers FetchRequest for a caller-supplied JSON-RPC URL whose every request goes through the
 * guarded connector. ethers would follow 3xx answers and retry throttled ones itself: neither here.
 * Named by the URL's origin, as `timedFetchRequest` is: ethers' errors name the request.
 */
export function guardedFetchRequest(http: GuardedHttp, url: string): ethers.FetchRequest {
  const request = new ethers.FetchRequest(urlOrigin(url));
  request.setThrottleParams({ maxAttempts: 1 });
  request.getUrlFunc = async (req) => {
    const response = await http.request(url, { method: req.method, headers: req.headers, body: req.body ?? undefined });
    if (response.statusCode >= 300 && response.statusCode < 400) throw new Error(`the node answered ${response.statusCode}; redirects are not followed`);
    if (response.truncated) throw new Error('the node answered more than the size limit');
    return { statusCode: response.statusCode, statusMessage: '', headers: response.headers, body: new Uint8Array(response.body) };
  };
  return request;
}

/**
 * A @solana/kit RPC transport for a caller-supplied Solana JSON-RPC URL, every request through the
 * guarded connector (no redirect followed, bounded in time and size). Integers beyond 2^53 are read
 * as bigints, as kit's own transport reads them.
 */
export function guardedSolanaTransport(http: GuardedHttp, url: string): RpcTransport {
  return (async ({ payload }: { payload: unknown }) => {
    const body = JSON.stringify(payload, (_k, v: unknown) => (typeof v === 'bigint' ? (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON(v.toString()) : v));
    const response = await http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body });
    if (response.statusCode >= 300 && response.statusCode < 400) throw new Error(`the node answered ${response.statusCode}; redirects are not followed`);
    if (response.truncated) throw new Error('the node answered more than the size limit');
    if (response.statusCode !== 200) throw new Error(`the node answered HTTP ${response.statusCode}`);
    const reviver = (_k: string, v: unknown, context?: { source?: string }) => (typeof v === 'number' && !Number.isSafeInteger(v) && context?.source && /^-?\d+$/.test(context.source) ? BigInt(context.source) : v);
    return JSON.parse(response.body.toString('utf8'), reviver as (k: string, v: unknown) => unknown);
  }) as RpcTransport;
}
