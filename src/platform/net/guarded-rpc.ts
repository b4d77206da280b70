import { ethers } from 'ethers';
import type { GuardedHttp } from './guarded-http';

/**
 * An ethers FetchRequest for a caller-supplied JSON-RPC URL whose every request goes through the
 * guarded connector. ethers would follow 3xx answers and retry throttled ones itself: neither here.
 */
export function guardedFetchRequest(http: GuardedHttp, url: string): ethers.FetchRequest {
  const request = new ethers.FetchRequest(url);
  request.setThrottleParams({ maxAttempts: 1 });
  request.getUrlFunc = async (req) => {
    const response = await http.request(req.url, { method: req.method, headers: req.headers, body: req.body ?? undefined });
    if (response.statusCode >= 300 && response.statusCode < 400) throw new Error(`the node answered ${response.statusCode}; redirects are not followed`);
    if (response.truncated) throw new Error('the node answered more than the size limit');
    return { statusCode: response.statusCode, statusMessage: '', headers: response.headers, body: new Uint8Array(response.body) };
  };
  return request;
}
