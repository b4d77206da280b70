import { urlOrigin, withoutCredentials } from '../net/rpc-url';

const RPC_TIMEOUT_MS = 10_000;

let rpcId = 0;

/**
 * One JSON-RPC call over HTTP; throws with the node's message on a JSON-RPC error. A URL's
 * `user:password@` is sent as basic authentication (as Keel's providers send it), and errors name
 * the node by its origin only (its path or query may hold a provider's API key).
 */
export async function rpc<T = unknown>(rpcUrl: string, method: string, params: unknown[] = [], timeoutMs = RPC_TIMEOUT_MS): Promise<T> {
  const at = `${method} at ${urlOrigin(rpcUrl)}`;
  if (!URL.canParse(rpcUrl)) throw new Error(`${at}: not a URL`);
  const { url, authorization } = withoutCredentials(rpcUrl);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let body: { result?: T; error?: { code?: number; message?: string } };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${at}: HTTP ${res.status}, not JSON-RPC: ${text.slice(0, 200)}`);
  }
  if (body.error) throw new Error(`${at}: ${body.error.message ?? 'error'} (${body.error.code ?? '?'})`);
  return body.result as T;
}
