import { ethers } from 'ethers';
import { urlOrigin, withoutCredentials } from './rpc-url';

/**
 * An ethers request to a JSON-RPC node that gives up after `timeoutMs` from start to the last byte
 * (connecting included) and closes its connection when it does: ethers' own timer is reset by each
 * byte, does not start until connected, and leaves the socket open when it fires, so a hung node
 * would collect one open socket per attempt. Fails with ethers' TIMEOUT as its own timer does, and
 * any other failure to reach the node with NETWORK_ERROR, never naming the URL (it may carry
 * credentials). A URL's `user:password@` is sent as basic authentication, as ethers sends it;
 * a redirect is refused (SERVER_ERROR), never followed. The request is named by the URL's origin
 * (ethers puts its URL in the errors it raises, e.g. for an HTTP 401): its getter fetches the whole URL.
 */
export function timedFetchRequest(url: string, timeoutMs: number): ethers.FetchRequest {
  const { url: bare, authorization } = withoutCredentials(url);
  const request = new ethers.FetchRequest(urlOrigin(bare));
  request.timeout = timeoutMs;
  if (authorization) request.setHeader('authorization', authorization);
  request.getUrlFunc = async (req, signal) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), req.timeout);
    signal?.addListener(() => controller.abort());
    try {
      const res = await fetch(bare, { method: req.method, headers: req.headers, body: req.body ?? undefined, signal: controller.signal, redirect: 'manual' });
      // Not followed: a redirect would take the node's credentials elsewhere, and leave this request's bounds.
      if (res.status >= 300 && res.status < 400) throw ethers.makeError(`the node answered ${res.status}; redirects are not followed`, 'SERVER_ERROR', { request: req, response: undefined as never });
      const body = new Uint8Array(await res.arrayBuffer());
      return { statusCode: res.status, statusMessage: res.statusText, headers: Object.fromEntries(res.headers), body };
    } catch (e) {
      if (ethers.isError(e, 'SERVER_ERROR')) throw e;
      if (signal?.cancelled) throw ethers.makeError('request cancelled', 'CANCELLED');
      if (controller.signal.aborted) throw ethers.makeError('request timeout', 'TIMEOUT');
      const cause = (e as { cause?: { code?: string } }).cause;
      throw ethers.makeError(`the node could not be reached${cause?.code ? ` (${cause.code})` : ''}`, 'NETWORK_ERROR', { event: 'request' });
    } finally {
      clearTimeout(timer);
    }
  };
  return request;
}
