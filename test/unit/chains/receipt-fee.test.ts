import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ethers } from 'ethers';
import { jsonRpcProvider } from '../../../src/modules/chains/chain-networks';

const BASE_CHAIN_ID = 8453;
const hash = (n: number) => ethers.zeroPadValue(ethers.toBeHex(n), 32);

/** A receipt as an OP-stack node answers it: the L2 gas, and the L1 data fee the sender paid besides. */
const opStackReceipt = {
  blockHash: hash(1),
  blockNumber: '0x1a2b3c',
  contractAddress: null,
  cumulativeGasUsed: '0x2dc6c0',
  effectiveGasPrice: '0x3b9aca00', // 1 gwei
  from: '0x1111111111111111111111111111111111111111',
  gasUsed: '0x5208', // 21,000
  logs: [],
  logsBloom: ethers.zeroPadValue('0x', 256),
  status: '0x1',
  to: '0x2222222222222222222222222222222222222222',
  transactionHash: hash(2),
  transactionIndex: '0x3',
  type: '0x2',
  l1Fee: '0x5af3107a4000', // 0.0001 ETH
  l1GasPrice: '0x3b9aca00',
  l1GasUsed: '0x640',
};

/** A node that answers every eth_getTransactionReceipt with `receipt`. */
async function nodeAnswering(receipt: object): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { id, method } = JSON.parse(body);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, ...(method === 'eth_getTransactionReceipt' ? { result: receipt } : { error: { code: -32601, message: 'not here' } }) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("a mined transaction's fee, as Keel books it", () => {
  async function receiptOf(receipt: object): Promise<ethers.TransactionReceipt> {
    const node = await nodeAnswering(receipt);
    const provider = jsonRpcProvider(node.url, BASE_CHAIN_ID);
    try {
      return (await provider.getTransactionReceipt(hash(2)))!;
    } finally {
      provider.destroy();
      await node.close();
    }
  }

  test("on an OP-stack rollup is the L2 gas (gasUsed × effectiveGasPrice) and the receipt's L1 data fee", async () => {
    const receipt = await receiptOf(opStackReceipt);
    expect(receipt.fee).toBe(21_000n * 1_000_000_000n + 100_000_000_000_000n);
    expect(receipt).toMatchObject({ hash: hash(2), blockHash: hash(1), blockNumber: 0x1a2b3c, status: 1, index: 3, gasUsed: 21_000n, gasPrice: 1_000_000_000n, logs: [] });
  });

  const feeOf = async (receipt: object) => (await receiptOf(receipt)).fee;

  test('on a chain whose receipts carry no L1 fee is gasUsed × effectiveGasPrice', async () => {
    const { l1Fee: _l1Fee, l1GasPrice: _price, l1GasUsed: _used, ...plain } = opStackReceipt;
    expect(await feeOf(plain)).toBe(21_000n * 1_000_000_000n);
    expect(await feeOf({ ...plain, l1Fee: null })).toBe(21_000n * 1_000_000_000n);
  });
});
