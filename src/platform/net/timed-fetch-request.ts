import { ethers } from 'ethers';

/**
 * An ethers request to a JSON-RPC node that gives up after `timeoutMs` from start to the last byte
 * (connecting included) and closes its connection when it does: ethers' own timer is reset by each
 * byte, does not start until connected, and leaves the socket open when it fires, so a hung node
 * would collect one open socket per attempt. Fails with ethers' TIMEOUT, as its own timer does.
 */
export function timedFetchRequest(url: string, timeoutMs: number): ethers.FetchRequest {
  const request = new ethers.FetchRequest(url);
  request.timeout = timeoutMs;
  request.getUrlFunc = async (req, signal) => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), req.timeout);
    signal?.addListener(() => controller.abort());
    try {
      const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body ?? undefined, signal: controller.signal });
      const body = new Uint8Array(await res.arrayBuffer());
      return { statusCode: res.status, statusMessage: res.statusText, headers: Object.fromEntries(res.headers), body };
    } catch (e) {
      if (signal?.cancelled) throw ethers.makeError('request cancelled', 'CANCELLED');
      if (controller.signal.aborted) throw ethers.makeError('request timeout', 'TIMEOUT');
      throw e;
    } finally {
      clearTimeout(timer);
    }
  };
  return request;
}
