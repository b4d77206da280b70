// Live data over graphql-ws on the host that served the page, one connection per session token:
// the core host's `events`, the order-book host's orderBook, trades, ticker, candles and orders.
import { createClient } from 'graphql-ws';

let shared = null;

function connection(token) {
  if (shared?.token === token) return shared;
  shared?.client.dispose();
  const listeners = new Set();
  const tell = (status, reason) => listeners.forEach((l) => l(status, reason));
  const client = createClient({
    url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
    connectionParams: { token },
    lazy: false,
    retryAttempts: 5,
    // 4401: the token expired or its key was revoked; retrying cannot help.
    shouldRetry: (e) => !(e && typeof e === 'object' && 'code' in e && e.code === 4401),
    // 4401 is final (the token expired or its key was revoked): 'refused' with the server's reason.
    on: { connected: () => tell('live'), closed: (e) => (e?.code === 4401 ? tell('refused', e.reason) : tell('offline')) },
  });
  shared = { token, client, listeners };
  return shared;
}

/** Calls onStatus('live' | 'offline' | 'refused', reason) as the session's connection opens and closes. */
export function watchConnection(token, onStatus) {
  const c = connection(token);
  c.listeners.add(onStatus);
  return () => c.listeners.delete(onStatus);
}

/** Subscribes with the session's connection; next gets each result's data. Returns the unsubscribe. */
export function subscribe(token, query, variables, next, onError = () => {}) {
  return connection(token).client.subscribe(
    { query, variables },
    {
      next: (msg) => (msg.errors ? onError(new Error(msg.errors[0].message)) : msg.data && next(msg.data)),
      error: (e) => onError(e instanceof Error ? e : new Error('The live connection closed')),
      complete: () => {},
    },
  );
}

export function closeLive() {
  shared?.client.dispose();
  shared = null;
}
