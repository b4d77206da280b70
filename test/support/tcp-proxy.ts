import { createServer, Server, Socket } from 'node:net';

/**
 * A loopback TCP proxy to a real server, for fault tests: close() makes the target unreachable
 * (connections dropped, new ones refused) without touching the server itself; open() brings it back
 * on the same port.
 */
export class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly targetPort: number,
    public port = 0,
  ) {}

  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = new Socket();
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.once('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      upstream.connect(this.targetPort, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
    this.server = null;
  }
}
