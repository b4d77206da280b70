const RPC_TIMEOUT_MS = 10_000;

let rpcId = 0;

/** One JSON-RPC call over HTTP; throws with the node's message on a JSON-RPC error. */
export async function rpc<T = unknown>(rpcUrl: string, method: string, params: unknown[] = [], timeoutMs = RPC_TIMEOUT_MS): Promise<T> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let body: { result?: T; error?: { code?: number; message?: string } };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${method} at ${rpcUrl}: HTTP ${res.status}, not JSON-RPC: ${text.slice(0, 200)}`);
  }
  if (body.error) throw new Error(`${method} at ${rpcUrl}: ${body.error.message ?? 'error'} (${body.error.code ?? '?'})`);
  return body.result as T;
}
