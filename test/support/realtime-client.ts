import { Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';

/** What one subscription has received so far. */
export interface Feed<T = any> {
  messages: T[];
  errors?: { message: string; extensions?: { code?: string } }[];
  completed: boolean;
}

/** A graphql-ws connection to a host's /graphql, recording every subscription's messages and the close frame. */
export class RealtimeClient {
  readonly client: Client;
  closed?: { code: number; reason: string };
  private readonly connected: Promise<void>;

  constructor(baseUrl: string, connectionParams: Record<string, string>) {
    let onConnected!: () => void;
    this.connected = new Promise((resolve) => (onConnected = resolve));
    this.client = createClient({
      url: `${baseUrl.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams,
      retryAttempts: 0,
      lazy: false,
      lazyCloseTimeout: 0,
      // The close is recorded in `closed` for the test to read; graphql-ws would also print it.
      onNonLazyError: () => {},
      on: {
        connected: () => onConnected(),
        closed: (event) => {
          const { code, reason } = event as { code: number; reason: unknown };
          this.closed ??= { code, reason: String(reason) };
        },
      },
    });
  }

  ready(): Promise<void> {
    return this.connected;
  }

  subscribe<T = any>(query: string, variables: Record<string, unknown> = {}): Feed<T> {
    const feed: Feed<T> = { messages: [], completed: false };
    const field = /subscription\s*(?:\w+)?\s*(?:\([^)]*\))?\s*\{\s*(\w+)/.exec(query)?.[1] ?? '';
    this.client.subscribe<Record<string, T>>(
      { query, variables },
      {
        next: (v) => {
          if (v.errors) feed.errors = v.errors as Feed['errors'];
          else feed.messages.push(v.data![field]);
        },
        error: (e) => (feed.errors = Array.isArray(e) ? (e as Feed['errors']) : [{ message: String((e as Error)?.message ?? e) }]),
        complete: () => (feed.completed = true),
      },
    );
    return feed;
  }

  close(): Promise<void> {
    return this.client.dispose() as Promise<void>;
  }
}

/**
 * A graphql-ws connection spoken by hand, so the test can stop reading it (a slow consumer): the
 * socket stays open but its received bytes pile up in the kernel and then on the server.
 */
export class RawRealtimeSocket {
  readonly ws: WebSocket;
  closed?: { code: number; reason: string };
  private readonly opened: Promise<void>;

  constructor(baseUrl: string, connectionParams: Record<string, string>) {
    this.ws = new WebSocket(`${baseUrl.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    this.ws.on('close', (code, reason) => (this.closed ??= { code, reason: reason.toString() }));
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => this.ws.send(JSON.stringify({ type: 'connection_init', payload: connectionParams })));
      this.ws.on('message', (data) => {
        if (JSON.parse(String(data)).type === 'connection_ack') resolve();
      });
      this.ws.once('error', reject);
    });
  }

  ready(): Promise<void> {
    return this.opened;
  }

  subscribe(id: string, query: string): void {
    this.ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query } }));
  }

  /**
   * Sends a subscribe message for `id` written by hand (`payload`: its JSON text, which may be
   * nested deeper than JSON.stringify could write) and resolves with the server's first message
   * for that id (`next`, `error` or `complete`).
   */
  subscribeRaw(id: string, payload: string): Promise<{ type: string; payload?: any }> {
    const answer = new Promise<{ type: string; payload?: any }>((resolve) => {
      const onMessage = (data: unknown) => {
        const message = JSON.parse(String(data));
        if (message.id !== id) return;
        this.ws.off('message', onMessage);
        resolve(message);
      };
      this.ws.on('message', onMessage);
    });
    this.ws.send(`{"id":${JSON.stringify(id)},"type":"subscribe","payload":${payload}}`);
    return answer;
  }

  /** Stops reading from the socket (the server's writes back up). */
  stopReading(): void {
    (this.ws as unknown as { _socket: { pause(): void } })._socket.pause();
  }

  resumeReading(): void {
    (this.ws as unknown as { _socket: { resume(): void } })._socket.resume();
  }

  whenClosed(): Promise<{ code: number; reason: string }> {
    if (this.closed) return Promise.resolve(this.closed);
    return new Promise((resolve) => this.ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }
}
