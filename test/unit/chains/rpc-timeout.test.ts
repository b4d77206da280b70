import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { jsonRpcProvider } from '../../../src/modules/chains/chain-networks';
import { EvmChain } from '../../../src/platform/chain-port/evm-chain';
import { TransferRefused } from '../../../src/platform/chain-port/chain-port';

/** A node that takes every request and never answers. */
async function hangingNode(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = http.createServer(() => undefined);
  server.on('connection', (s) => sockets.add(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

describe('a node that does not answer', () => {
  test('a request gives up after the configured timeout, and a gas estimate counts as not answered (not refused)', async () => {
    const node = await hangingNode();
    const provider = jsonRpcProvider(node.url, 31337, 300);
    try {
      const chain = new EvmChain({ provider, chainId: 31337, confirmations: 1 });
      const started = Date.now();
      const error = await chain.gasLimit('0x0000000000000000000000000000000000000001', { to: '0x0000000000000000000000000000000000000002', value: 1n, data: '0x' }).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(error).toMatchObject({ code: 'TIMEOUT' });
      expect(error).not.toBeInstanceOf(TransferRefused);
    } finally {
      provider.destroy();
      await node.close();
    }
  });
});
