// Live data over graphql-ws on the same host: the core host's `events` subscription.
import { createClient } from 'graphql-ws';

/** Subscribes to the organisation's events; calls onEvent per event and onStatus on (dis)connection. */
export function subscribeEvents(token, onEvent, onStatus) {
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;
  const client = createClient({
    url,
    connectionParams: { token },
    lazy: false,
    retryAttempts: 5,
    shouldRetry: (e) => !(e && typeof e === 'object' && 'code' in e && e.code === 4401),
    on: {
      connected: () => onStatus('live'),
      closed: () => onStatus('offline'),
      error: () => onStatus('offline'),
    },
  });
  const stop = client.subscribe(
    { query: 'subscription ConsoleEvents { events { id type timestamp data } }' },
    {
      next: (msg) => msg.data?.events && onEvent(msg.data.events),
      error: () => onStatus('offline'),
      complete: () => {},
    },
  );
  return () => {
    stop();
    client.dispose();
  };
}
