import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { jsonRpcProvider } from '../../../src/modules/chains/chain-networks';
import { rpc } from '../../../src/platform/chain/json-rpc';
import { EvmChain } from '../../../src/platform/chain-port/evm-chain';
import { TransferRefused } from '../../../src/platform/chain-port/chain-port';
import { isDefinitiveRefusal } from '../../../src/modules/settlement/settlement-contract';
import { shortReason } from '../../../src/platform/chain-port/evm-transactions';
import { DepositWatcher } from '../../../src/modules/deposits/deposit-watcher';
import { createLogger } from '../../../src/platform/logger';
import { generateKeyPairSigner, getBase64EncodedWireTransaction, getSignatureFromTransaction, type Blockhash } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { SolanaChain } from '../../../src/platform/chain-port/solana-chain';
import { signedTransaction } from '../../support/solana-node';

/** A node that takes every request and never finishes answering: silent, or a byte every 50 ms. */
async function hangingNode(trickle: boolean): Promise<{ url: string; open(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((_req, res) => {
    if (!trickle) return;
    res.writeHead(200, { 'content-type': 'application/json' });
    const timer = setInterval(() => res.write(' '), 50);
    timers.add(timer);
    res.on('close', () => clearInterval(timer));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearInterval(t);
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('a node that does not answer', () => {
  test.each([
    ['says nothing', false],
    ['answers a byte at a time, never finishing', true],
  ])('one that %s: a request gives up after the configured timeout and closes its connection; a gas estimate counts as not answered (not refused)', async (_, trickle) => {
    const node = await hangingNode(trickle);
    const provider = jsonRpcProvider(node.url, 31337, 300);
    try {
      const chain = new EvmChain({ provider, chainId: 31337, confirmations: 1 });
      const started = Date.now();
      const error = await chain.gasLimit('0x0000000000000000000000000000000000000001', { to: '0x0000000000000000000000000000000000000002', value: 1n, data: '0x' }).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(error).toMatchObject({ code: 'TIMEOUT' });
      expect(error).not.toBeInstanceOf(TransferRefused);
      // The connection is closed, not left open on the hung node.
      for (let i = 0; i < 50 && node.open() > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(node.open()).toBe(0);
    } finally {
      provider.destroy();
      await node.close();
    }
  });
});

/** A node that answers eth_estimateGas with the JSON-RPC `error` and anything else with null (single requests and batches). */
async function nodeAnswering(error: { code: number; message: string; data?: string }): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const requests = JSON.parse(body) as { id: number; method: string } | { id: number; method: string }[];
    const answer = (r: { id: number; method: string }) => (r.method === 'eth_estimateGas' ? { jsonrpc: '2.0', id: r.id, error } : { jsonrpc: '2.0', id: r.id, result: null });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(Array.isArray(requests) ? requests.map(answer) : answer(requests)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('a gas estimate the node answers with an error', () => {
  const from = '0x0000000000000000000000000000000000000001';
  const to = '0x0000000000000000000000000000000000000002';
  /**
   * What Keel makes of the node's answer: the sender's gas limit and the transfer estimate (the
   * gas-estimate API's) both, and the settlement senders' judgement of a failed estimate (a refusal
   * fails a trading withdrawal or splits a batch), as TransferRefused or not.
   */
  async function estimatesWith(error: { code: number; message: string; data?: string }): Promise<unknown[]> {
    const node = await nodeAnswering(error);
    const provider = jsonRpcProvider(node.url, 31337, 2_000);
    try {
      const chain = new EvmChain({ provider, chainId: 31337, confirmations: 1 });
      const settlementEstimate = provider.estimateGas({ from, to, data: '0x12345678' }).then(
        () => null,
        (e: unknown) => (isDefinitiveRefusal(e) ? new TransferRefused('refused') : new Error('not answered')),
      );
      return await Promise.all([chain.gasLimit(from, { to, value: 1n, data: '0x' }).catch((e: unknown) => e), chain.estimateTransfer(from, { to, asset: { kind: 'native' }, amount: 1n }).catch((e: unknown) => e), settlementEstimate]);
    } finally {
      provider.destroy();
      await node.close();
    }
  }

  test.each([
    ['a revert with its reason (geth)', { code: 3, message: 'execution reverted: ERC20: transfer amount exceeds balance', data: '0x08c379a00000000000000000000000000000000000000000000000000000000000000020000000000000000000000000000000000000000000000000000000000000002645524332303a207472616e7366657220616d6f756e7420657863656564732062616c616e63650000000000000000000000000000000000000000000000000000' }],
    ['a revert without data (geth)', { code: -32000, message: 'execution reverted' }],
    ['a revert (Hardhat)', { code: -32603, message: "Error: VM Exception while processing transaction: reverted with reason string 'no'" }],
    ['no coin for gas (geth)', { code: -32000, message: 'insufficient funds for gas * price + value: address 0x01 have 0 want 1' }],
    ['no coin for gas (Hardhat)', { code: -32000, message: "Sender doesn't have enough funds to send tx. The max upfront cost is: 1 and the sender's balance is: 0." }],
    ['more gas than allowed', { code: -32000, message: 'gas required exceeds allowance (30000000)' }],
    ['a gas limit above the block', { code: -32000, message: 'exceeds block gas limit' }],
    ['too little gas', { code: -32000, message: 'intrinsic gas too low' }],
  ])('saying the transaction would fail (%s) is a refusal', async (_, error) => {
    for (const answer of await estimatesWith(error)) expect(answer).toBeInstanceOf(TransferRefused);
  });

  test.each([
    ['a node behind, without the block', { code: -32000, message: 'header not found' }],
    ['a rate limit', { code: -32005, message: 'daily request count exceeded, request rate limited' }],
    ['an internal error', { code: -32603, message: 'Internal error' }],
    ["the node's own timeout", { code: -32000, message: 'request timed out' }],
  ])('of its own (%s) is no refusal (not TransferRefused: the sender tries the line again, the gas-estimate API answers UPSTREAM_ERROR)', async (_, error) => {
    for (const answer of await estimatesWith(error)) {
      expect(answer).toBeInstanceOf(Error);
      expect(answer).not.toBeInstanceOf(TransferRefused);
    }
  });
});

describe("a node's URL with credentials", () => {
  test('they are sent as basic authentication, and never appear in an error', async () => {
    let authorization: string | undefined;
    const server = http.createServer((req, res) => {
      authorization = req.headers.authorization;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0x2a' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const provider = jsonRpcProvider(`http://keel:s%40cret@127.0.0.1:${port}`, 31337, 2_000);
    try {
      expect(await provider.getBlockNumber()).toBe(42);
      expect(authorization).toBe(`Basic ${Buffer.from('keel:s@cret').toString('base64')}`);
    } finally {
      provider.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    // A redirect is refused, never followed: the credentials stay with the node they were given for.
    let followed = false;
    const elsewhere = http.createServer((_req, res) => ((followed = true), res.end()));
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    const redirecting = http.createServer((_req, res) => res.writeHead(307, { location: `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/` }).end());
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const redirected = jsonRpcProvider(`http://keel:s%40cret@127.0.0.1:${(redirecting.address() as AddressInfo).port}`, 31337, 2_000);
    try {
      expect(await redirected.getBlockNumber().catch((e: unknown) => e)).toMatchObject({ code: 'SERVER_ERROR' });
      expect(followed).toBe(false);
    } finally {
      redirected.destroy();
      await Promise.all([elsewhere, redirecting].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    }
    // The same node gone: a network error that names neither the URL nor its password.
    const gone = jsonRpcProvider(`http://keel:s%40cret@127.0.0.1:${port}`, 31337, 2_000);
    try {
      const error = await gone.getBlockNumber().catch((e: unknown) => e as Error);
      expect(error).toMatchObject({ code: 'NETWORK_ERROR' });
      expect(String((error as Error).message)).not.toMatch(/cret|keel:/);
    } finally {
      gone.destroy();
    }
  });
});

describe("a node that answers an HTTP error (a provider refusing its API key)", () => {
  test('is named by its origin only, in json-rpc calls and in ethers providers alike: never the path, query or user:password holding the key', async () => {
    let authorization: string | undefined;
    const server = http.createServer((req, res) => {
      authorization = req.headers.authorization;
      res.writeHead(401, { 'content-type': 'text/plain' }).end('invalid project id');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const keyed = `${origin}/v3/SECRET-PROJECT-KEY-123?apikey=SECRET-QUERY`;
    const withPassword = `http://keel:SECRET-PASSWORD@${origin.slice('http://'.length)}/v3/SECRET-PROJECT-KEY-123`;
    const provider = jsonRpcProvider(keyed, 31337, 2_000);
    try {
      await expect(rpc(keyed, 'eth_chainId')).rejects.toThrow(new Error(`eth_chainId at ${origin}: HTTP 401, not JSON-RPC: invalid project id`));
      // A user:password is sent as basic authentication (fetch would refuse the URL, naming it).
      await expect(rpc(withPassword, 'eth_chainId')).rejects.toThrow(new Error(`eth_chainId at ${origin}: HTTP 401, not JSON-RPC: invalid project id`));
      expect(authorization).toBe(`Basic ${Buffer.from('keel:SECRET-PASSWORD').toString('base64')}`);
      const error = (await provider.getBlockNumber().catch((e: unknown) => e)) as Error & { info?: unknown };
      expect(error).toMatchObject({ code: 'SERVER_ERROR', info: expect.objectContaining({ requestUrl: origin, responseStatus: '401 Unauthorized' }) });
      expect(`${error.message} ${JSON.stringify(error.info)}`).not.toMatch(/SECRET/);
    } finally {
      provider.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('a node refusing the key in its URL (401 at /v2/<key>)', () => {
  const KEY = 'SECRET-KEY';
  let node: http.Server;
  let rpcUrl: string;
  beforeAll(async () => {
    node = http.createServer((_req, res) => res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid key"}'));
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    rpcUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}/v2/${KEY}`;
  });
  afterAll(() => new Promise<void>((resolve) => node.close(() => resolve())));

  test("its error's loggable reason names the node by origin only, and so does a URL quoted in any error's message", async () => {
    const provider = jsonRpcProvider(rpcUrl, 31337, 2_000);
    try {
      const error = (await provider.getBlockNumber().catch((e: unknown) => e)) as Error;
      expect(error).toMatchObject({ code: 'SERVER_ERROR' });
      expect(shortReason(error)).not.toContain(KEY);
      expect(shortReason(new Error(`request to ${rpcUrl}?apikey=${KEY} failed`))).toBe(`request to ${new URL(rpcUrl).origin} failed`);
      expect(shortReason(new Error(`could not reach https://keel:${KEY}@rpc.example/`))).toBe('could not reach https://rpc.example');
    } finally {
      provider.destroy();
    }
  });

  test("a deposit watcher's warning for each failed scan carries no key", async () => {
    const provider = jsonRpcProvider(rpcUrl, 31337, 2_000);
    const lines: string[] = [];
    const logger = createLogger('warn', { write: (line: string) => void lines.push(line) });
    const port = new EvmChain({ provider, chainId: 31337, confirmations: 1 });
    const watcher = new DepositWatcher({ blockchainId: 'chain-1', port }, {} as never, {} as never, {} as never, { pollIntervalMs: 20, batchBlocks: 10, reorgWindowBlocks: 10 }, logger);
    const loop = watcher.start();
    try {
      for (let i = 0; i < 100 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(JSON.parse(lines[0])).toMatchObject({ msg: 'deposit watcher: scan failed, retrying', blockchainId: 'chain-1', err: { code: 'SERVER_ERROR', message: expect.stringContaining('401') } });
      expect(lines.join('')).not.toContain(KEY);
    } finally {
      await loop.stop();
      provider.destroy();
    }
  });
});

describe("a Solana node whose words quote its URL's path and query (where a provider's key sits)", () => {
  const KEY = 'SECRET-KEY';
  const QUERY = 'SECRET-QUERY';
  const echoed = `/v2/${KEY}?api-key=${QUERY}`;
  let node: http.Server;
  let chain: SolanaChain;
  beforeAll(async () => {
    // A provider's node (or the proxy before it) naming the path it was asked at: in a JSON-RPC error's
    // message, and in a transaction error of a kind @solana/kit does not know (shown by its name).
    node = http.createServer(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      const { id, method } = JSON.parse(body) as { id: number; method: string };
      const answers: Record<string, object> = {
        getBalance: { result: { context: { slot: 1 }, value: 0 } },
        getMinimumBalanceForRentExemption: { result: 890_880 },
        simulateTransaction: { result: { context: { slot: 1 }, value: { err: `QuotaExceeded at ${echoed}`, logs: [], accounts: null, unitsConsumed: 150, returnData: null } } },
        sendTransaction: { error: { code: -32002, message: `Transaction simulation failed: QuotaExceeded at ${echoed}`, data: { err: `QuotaExceeded at ${echoed}`, logs: [], accounts: null, unitsConsumed: 0, returnData: null } } },
        getEpochInfo: { result: { absoluteSlot: 10, blockHeight: 10, epoch: 0, slotIndex: 10, slotsInEpoch: 432000, transactionCount: null } },
        getSignatureStatuses: { result: { context: { slot: 10 }, value: [{ slot: 9, confirmations: 1, err: `QuotaExceeded at ${echoed}`, status: { Err: `QuotaExceeded at ${echoed}` }, confirmationStatus: 'confirmed' }] } },
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id, ...(answers[method] ?? { error: { code: -32603, message: `upstream refused POST ${echoed}` } }) }));
    });
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    chain = new SolanaChain({ rpcUrl: `http://127.0.0.1:${(node.address() as AddressInfo).port}${echoed}`, priorityMicroLamports: 0n });
  });
  afterAll(() => new Promise<void>((resolve) => node.close(() => resolve())));

  test("an error of the node's own words has the path and query cut out, as json-rpc's are", async () => {
    const error = (await chain.height('final').catch((e: unknown) => e)) as Error;
    expect(error.message).toContain('upstream refused POST /…?…');
    expect(`${error.message} ${JSON.stringify(error)}`).not.toMatch(/SECRET/);
  });

  test('a refused transfer (the simulation of its estimate, its preflight when sent) and one that failed on chain say why without the path or query', async () => {
    const payer = await generateKeyPairSigner();
    const to = (await generateKeyPairSigner()).address;
    const estimate = await chain.estimateTransfer(payer.address, { to, asset: { kind: 'native' }, amount: 1_000_000n }).catch((e: unknown) => e);
    expect(estimate).toBeInstanceOf(TransferRefused);
    expect((estimate as Error).message).toBe('the transfer would fail: The transaction failed with the error `QuotaExceeded at /…?…`');
    const tx = await signedTransaction(payer, { blockhash: '4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn' as Blockhash, lastValidBlockHeight: 1000n }, [getTransferSolInstruction({ source: payer, destination: to, amount: 1_000_000n })]);
    const prepared = { txId: getSignatureFromTransaction(tx), raw: getBase64EncodedWireTransaction(tx), validThrough: 1000, validFrom: 850, nonce: null, fee: { fee: 5000n, accountCreation: 0n, nativeNeeded: 5000n } };
    const sent = await chain.broadcast(prepared).catch((e: unknown) => e);
    expect(sent).toBeInstanceOf(TransferRefused);
    expect((sent as Error).message).toBe('the transfer was refused before it could land: The transaction failed with the error `QuotaExceeded at /…?…`');
    expect(await chain.outcome(prepared)).toEqual({ state: 'landed', height: 9, finality: 'confirmed', failed: true, error: '"QuotaExceeded at /…?…"' });
  });
});
