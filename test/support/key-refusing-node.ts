import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ethers } from 'ethers';

/**
 * A JSON-RPC node on loopback that answers every request 401, quoting the key back as hosted
 * providers do; `balanceReadError` is what a real ethers provider raises reading a balance from it
 * through `http://<user>:<password>@127.0.0.1:<port>/v2/<key>`: its URL, basic authentication and
 * the node's answer all hang on the error.
 */
export async function keyRefusingNode(key: string): Promise<{ balanceReadError(user: string, password: string): Promise<unknown>; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: `invalid project key ${key}` } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    async balanceReadError(user, password) {
      const provider = new ethers.JsonRpcProvider(`http://${user}:${password}@127.0.0.1:${port}/v2/${key}`, 1, { staticNetwork: true });
      try {
        return await provider.getBalance('0x0000000000000000000000000000000000000001').then(
          () => new Error('the node answered'),
          (e: unknown) => e,
        );
      } finally {
        provider.destroy();
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
