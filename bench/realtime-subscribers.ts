import WebSocket from 'ws';

/**
 * The realtime benchmark's subscribers, in their own process (so the order load and the readers
 * do not share an event loop): N connections, each on the book and the trades of one market,
 * counting what arrives and how long after its commit (the message's timestamp) it arrived.
 * Driven over IPC by bench/realtime.ts.
 */
type Command =
  | { cmd: 'connect'; target: 'keel' | 'floor'; url: string; connections: number; markets: string[]; apiKey?: string; orgId?: string }
  | { cmd: 'start' }
  | { cmd: 'stop' }
  | { cmd: 'close' };

const BUCKET_MS = 0.1;
const histogram = new Uint32Array(200_000);
let counting = false;
let messages = 0;
let startedAt = 0;
let sockets: WebSocket[] = [];

function record(timestamp: string | undefined): void {
  if (!counting) return;
  messages++;
  if (!timestamp) return;
  const lag = Date.now() - Date.parse(timestamp);
  histogram[Math.min(histogram.length - 1, Math.max(0, Math.round(lag / BUCKET_MS)))]++;
}

function percentile(p: number): number {
  const total = histogram.reduce((a, b) => a + b, 0);
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i];
    if (seen >= total * p) return i * BUCKET_MS;
  }
  return NaN;
}

function openKeel(url: string, market: string, apiKey: string, orgId: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url}/graphql`, 'graphql-transport-ws');
    let ready = 0;
    ws.once('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { apiKey, orgId } })));
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.type === 'connection_ack') {
        ws.send(JSON.stringify({ id: 'b', type: 'subscribe', payload: { query: `subscription { orderBook(symbol: "${market}") { kind sequence timestamp bids { price quantity orders } asks { price quantity orders } } }` } }));
        ws.send(JSON.stringify({ id: 't', type: 'subscribe', payload: { query: `subscription { trades(symbol: "${market}") { id price quantity takerSide createdAt } }` } }));
        setTimeout(() => resolve(ws), 0);
        return;
      }
      if (m.type === 'next') {
        const d = m.payload.data;
        if (d?.orderBook) {
          if (d.orderBook.kind === 'SNAPSHOT' && !ready++) return;
          record(d.orderBook.timestamp);
        } else if (d?.trades) record(d.trades.createdAt);
      } else if (m.type === 'error') reject(new Error(JSON.stringify(m.payload)));
    });
    ws.once('error', reject);
  });
}

function openFloor(url: string, market: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => ws.send(JSON.stringify({ subscribe: market })));
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.type === 'subscribed') resolve(ws);
      else record(m.timestamp ?? m.createdAt);
    });
    ws.once('error', reject);
  });
}

process.on('message', async (c: Command) => {
  try {
    if (c.cmd === 'connect') {
      sockets = [];
      for (let i = 0; i < c.connections; i += 50) {
        const batch = Array.from({ length: Math.min(50, c.connections - i) }, (_, j) => {
          const market = c.markets[(i + j) % c.markets.length];
          return c.target === 'keel' ? openKeel(c.url, market, c.apiKey!, c.orgId!) : openFloor(c.url, market);
        });
        sockets.push(...(await Promise.all(batch)));
      }
      process.send!({ connected: sockets.length });
    } else if (c.cmd === 'start') {
      histogram.fill(0);
      messages = 0;
      counting = true;
      startedAt = performance.now();
      process.send!({ started: true });
    } else if (c.cmd === 'stop') {
      counting = false;
      const seconds = (performance.now() - startedAt) / 1000;
      const closedEarly = sockets.filter((s) => s.readyState !== WebSocket.OPEN).length;
      process.send!({ messages, seconds, messagesPerSecond: messages / seconds, lagP50Ms: percentile(0.5), lagP99Ms: percentile(0.99), closedEarly });
    } else if (c.cmd === 'close') {
      await Promise.all(sockets.map((s) => new Promise<void>((resolve) => (s.readyState === WebSocket.CLOSED ? resolve() : (s.once('close', () => resolve()), s.close())))));
      sockets = [];
      process.send!({ closed: true });
    }
  } catch (e) {
    process.send!({ error: String(e instanceof Error ? e.message : e) });
  }
});
