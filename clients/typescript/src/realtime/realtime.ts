import { Client, createClient } from 'graphql-ws';
import type { ProClient } from '../clients';
import { unwrap } from '../errors';

export interface RealtimeOptions {
  /** The order-book host's base URL (http://… or https://…); the socket is ws(s)://…/graphql. */
  baseUrl: string;
  /** Issues the realtime tokens (POST /v1/orderbook/realtime/auth) with its API key. */
  pro: ProClient;
  /** Channels to narrow the tokens to, e.g. ['book:ETH-USDC']; default: all the key may read. */
  channels?: string[];
  /** Each token's lifetime (default 900 s). */
  ttlSeconds?: number;
  /**
   * How long before a token expires the next one is fetched and the connection moved to it (default a
   * fifth of the lifetime, at most 60 s). Whenever the host closes the connection for an expired token
   * (4401), that renews it too.
   */
  renewBeforeSeconds?: number;
  /** A WebSocket implementation where there is no global one (e.g. the `ws` package on Node < 22). */
  webSocketImpl?: unknown;
  /** Told each time a token is fetched (the first and every renewal). */
  onToken?(token: { expiresAt: string; channels?: string[] | null }): void;
}

export interface Sink<T> {
  next(value: T): void;
  error(error: unknown): void;
  complete?(): void;
}

interface Connection {
  client: Client;
  renewal?: ReturnType<typeof setTimeout>;
}

interface Active {
  query: string;
  variables: Record<string, unknown>;
  sink: Sink<Record<string, unknown>>;
  /** Which connection's messages count: a moved subscription ignores the old one's stragglers. */
  generation: number;
  dispose?: () => void;
}

/** graphql-ws closes a connection whose token expired with 4401. */
const isTokenExpiry = (error: unknown) => typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 4401;

/**
 * Keel's realtime channel: one graphql-ws connection to the order-book host, authorised with a
 * short-lived realtime token the API key fetches. Before the token expires (or when the host closes
 * the connection for an expired token) a new token is fetched, a new connection opened and every
 * subscription moved to it; each subscription starts over there (the order book with a new SNAPSHOT).
 */
export class KeelRealtime {
  private connection: Promise<Connection> | undefined;
  /** The newest connection opened, once open. */
  private latest: Connection | undefined;
  private readonly active = new Set<Active>();
  private closed = false;

  constructor(private readonly options: RealtimeOptions) {}

  /** Subscribes to a GraphQL subscription; returns the unsubscribe. `next` gets the result's data. */
  subscribe<T = Record<string, unknown>>(query: string, variables: Record<string, unknown>, sink: Sink<T>): () => void {
    const active: Active = { query, variables, sink: sink as Sink<Record<string, unknown>>, generation: 0 };
    this.active.add(active);
    this.connect()
      .then((connection) => this.attach(active, connection))
      .catch((error) => sink.error(error));
    return () => {
      this.active.delete(active);
      active.dispose?.();
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.active.clear();
    const connection = await this.connection?.catch(() => undefined);
    clearTimeout(connection?.renewal);
    await connection?.client.dispose();
  }

  private connect(): Promise<Connection> {
    this.connection ??= this.open();
    return this.connection;
  }

  private async open(): Promise<Connection> {
    const { baseUrl, pro, channels, ttlSeconds, renewBeforeSeconds } = this.options;
    const { data: issued } = await unwrap(pro.POST('/v1/orderbook/realtime/auth', { body: { channels, ttlSeconds } }));
    this.options.onToken?.({ expiresAt: issued.expiresAt, channels: issued.channels });
    const client = createClient({
      url: `${baseUrl.replace(/^http/, 'ws').replace(/\/+$/, '')}/graphql`,
      connectionParams: { token: issued.token },
      webSocketImpl: this.options.webSocketImpl,
      lazy: true,
      // Network blips reconnect with the same token while it is valid; an expired one is renewed below.
      retryAttempts: 5,
    });
    const renewBefore = (renewBeforeSeconds ?? Math.min(60, issued.expiresIn / 5)) * 1000;
    const renewal = setTimeout(() => this.renew(), Math.max(0, Date.parse(issued.expiresAt) - Date.now() - renewBefore));
    renewal.unref?.();
    this.latest = { client, renewal };
    return this.latest;
  }

  /** A new token and connection; every subscription moves to it, then the old connection closes. */
  private renew(expired?: Connection): void {
    // Every subscription of an expired connection reports it: renew once.
    if (this.closed || (expired && expired !== this.latest)) return;
    const previous = this.connection;
    this.connection = this.open();
    this.connection
      .then(async (connection) => {
        for (const active of this.active) this.attach(active, connection);
        const old = await previous?.catch(() => undefined);
        clearTimeout(old?.renewal);
        await old?.client.dispose();
      })
      .catch((error) => {
        for (const active of this.active) active.sink.error(error);
      });
  }

  private attach(active: Active, connection: Connection): void {
    if (!this.active.has(active)) return;
    const generation = ++active.generation;
    const current = () => active.generation === generation && this.active.has(active);
    const stale = active.dispose;
    active.dispose = connection.client.subscribe<Record<string, unknown>>(
      { query: active.query, variables: active.variables },
      {
        next: (result) => {
          if (!current()) return;
          if (result.errors?.length) active.sink.error(result.errors);
          else if (result.data) active.sink.next(result.data);
        },
        error: (error) => {
          if (!current()) return;
          if (isTokenExpiry(error)) this.renew(connection);
          else active.sink.error(error);
        },
        complete: () => current() && active.sink.complete?.(),
      },
    );
    stale?.();
  }
}
