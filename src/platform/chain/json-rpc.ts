import { urlOrigin, withoutCredentials, withUrlsAsOrigins } from '../net/rpc-url';

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
    throw new Error(`${at}: HTTP ${res.status}, not JSON-RPC: ${quoted(text.slice(0, 200), url)}`);
  }
  if (body.error) throw new Error(`${at}: ${quoted(String(body.error.message ?? 'error'), url)} (${body.error.code ?? '?'})`);
  return body.result as T;
}

/**
 * The node's own words with what of its URL they echo cut out: any URL to its origin, and the URL's
 * path and query wherever they appear alone ("Cannot POST /v2/<key>"), as either may hold a key.
 * A Solana node's words are cut by it too (solana-chain.ts).
 */
export function quoted(text: string, url: string): string {
  let out = withUrlsAsOrigins(text);
  if (!URL.canParse(url)) return out;
  const { pathname, search } = new URL(url);
  if (search.length > 1) out = out.split(search).join('?…');
  if (pathname.length > 1) out = out.split(pathname).join('/…');
  return out;
}
