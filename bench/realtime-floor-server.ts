import { createServer } from 'node:http';
import IORedis from 'ioredis';
import { WebSocket, WebSocketServer } from 'ws';

/**
 * The realtime benchmark's yardstick: a bare `ws` server that hears the same Redis channel Keel's
 * nodes publish their commits on and broadcasts the same messages (each book change and each
 * trade, as JSON) to the sockets subscribed to that market. No GraphQL, authentication, sequence
 * checks, shared feeds or slow-consumer bounds: the fan-out alone.
 */
function main(): void {
  const port = Number(process.env.PORT);
  const channel = `${process.env.REDIS_PREFIX}realtime`;
  const byMarket = new Map<string, Set<WebSocket>>();
  const server = createServer((req, res) => {
    res.writeHead(req.url === '/ready' ? 200 : 404).end();
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const { subscribe } = JSON.parse(String(data)) as { subscribe: string };
      let set = byMarket.get(subscribe);
      if (!set) byMarket.set(subscribe, (set = new Set()));
      set.add(ws);
      ws.once('close', () => set.delete(ws));
      ws.send(JSON.stringify({ type: 'subscribed' }));
    });
  });
  const redis = new IORedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  void redis.subscribe(channel);
  redis.on('message', (_channel: string, message: string) => {
    const change = JSON.parse(message) as { symbol: string; committedAt: number; book: { sequence: string; bids: unknown[]; asks: unknown[] } | null; trades: Record<string, unknown>[] };
    const sockets = byMarket.get(change.symbol);
    if (!sockets?.size) return;
    const timestamp = new Date(change.committedAt).toISOString();
    const out: string[] = [];
    if (change.book) out.push(JSON.stringify({ type: 'book', market: change.symbol, kind: 'UPDATE', sequence: change.book.sequence, bids: change.book.bids, asks: change.book.asks, timestamp }));
    for (const t of change.trades) out.push(JSON.stringify({ type: 'trade', id: t.id, price: t.price, quantity: t.quantity, takerSide: t.takerSide, createdAt: timestamp }));
    for (const ws of sockets) for (const m of out) ws.send(m);
  });
  server.listen(port, '127.0.0.1');
  process.on('SIGTERM', () => process.exit(0));
}

main();
