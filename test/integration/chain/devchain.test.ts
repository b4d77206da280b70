/**
 * Real Hardhat dev chains (child processes on loopback), no mocks.
 * Needs build/contracts/TestToken.json: `node scripts/compile-contracts.js` (part of `npm run build`).
 */
import net from 'node:net';
import { ethers } from 'ethers';
import { DevChain, startDevChain } from '../../../src/platform/chain/devchain';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { rpc } from '../../../src/platform/chain/json-rpc';
import { deployTestTokens, predictTestTokenAddresses } from '../../../src/platform/chain/test-tokens';
import { fundFromFaucet } from '../../../src/platform/chain/faucet';
import { mine, revert, setAutomine, snapshot } from '../../support/chain-controls';

const ERC20_ABI = [
  'function balanceOf(address) view returns (uint256)',
  'function decimals() view returns (uint8)',
  'function symbol() view returns (string)',
  'function owner() view returns (address)',
];

function providerFor(chain: DevChain): ethers.JsonRpcProvider {
  return new ethers.JsonRpcProvider(chain.rpcUrl, undefined, { cacheTimeout: -1, staticNetwork: ethers.Network.from(chain.chainId) });
}

async function blockNumber(chain: DevChain): Promise<number> {
  return Number(await rpc<string>(chain.rpcUrl, 'eth_blockNumber'));
}

async function nativeBalance(chain: DevChain, address: string): Promise<bigint> {
  return BigInt(await rpc<string>(chain.rpcUrl, 'eth_getBalance', [address, 'latest']));
}

async function tokenBalance(chain: DevChain, token: string, address: string): Promise<bigint> {
  const p = providerFor(chain);
  try {
    return await new ethers.Contract(token, ERC20_ABI, p).balanceOf(address);
  } finally {
    p.destroy();
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0); // succeeds for a zombie too
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const freshAddress = () => ethers.Wallet.createRandom().address;

describe('dev chains', () => {
  let a: DevChain;
  let b: DevChain;

  beforeAll(async () => {
    const t0 = Date.now();
    [a, b] = await Promise.all([startDevChain({ chainId: 31337 }), startDevChain({ chainId: 31338, blockIntervalMs: 200 })]);
    // eslint-disable-next-line no-console
    if (process.env.DEVCHAIN_TIMING) console.log(`two dev chains started in ${Date.now() - t0} ms`);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('runs two chains at once, each with its chain id, port and the well-known funded account', async () => {
    expect(a.port).not.toBe(b.port);
    expect(a.rpcUrl).toBe(`http://127.0.0.1:${a.port}`);
    expect(Number(await rpc<string>(a.rpcUrl, 'eth_chainId'))).toBe(31337);
    expect(Number(await rpc<string>(b.rpcUrl, 'eth_chainId'))).toBe(31338);
    expect(a.fundedAccount.address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(new ethers.Wallet(a.fundedAccount.privateKey).address).toBe(a.fundedAccount.address);
    expect(b.fundedAccount).toEqual(a.fundedAccount);
    expect(await nativeBalance(b, b.fundedAccount.address)).toBeGreaterThanOrEqual(ethers.parseEther('999999'));
  });

  it('deploys USDC, USDT and DAI with the right decimals at the same addresses on every fresh chain', async () => {
    const [onA, onB] = await Promise.all([
      deployTestTokens(a.rpcUrl, a.fundedAccount.privateKey),
      deployTestTokens(b.rpcUrl, b.fundedAccount.privateKey),
    ]);
    expect(onA.map((t) => [t.symbol, t.decimals])).toEqual([
      ['USDC', 6],
      ['USDT', 6],
      ['DAI', 18],
    ]);
    expect(onB).toEqual(onA);
    expect(onA.map((t) => t.address)).toEqual(predictTestTokenAddresses(a.fundedAccount.address));

    const p = providerFor(a);
    try {
      for (const t of onA) {
        const c = new ethers.Contract(t.address, ERC20_ABI, p);
        expect(Number(await c.decimals())).toBe(t.decimals);
        expect(await c.symbol()).toBe(t.symbol);
        expect(await c.owner()).toBe(a.fundedAccount.address);
        expect(await c.balanceOf(a.fundedAccount.address)).toBe(ethers.parseUnits('1000000000000', t.decimals));
      }
    } finally {
      p.destroy();
    }
    // Idempotent: asking again returns the deployed tokens, with no new transactions.
    const nonceBefore = await rpc<string>(a.rpcUrl, 'eth_getTransactionCount', [a.fundedAccount.address, 'latest']);
    expect(await deployTestTokens(a.rpcUrl, a.fundedAccount.privateKey)).toEqual(onA);
    expect(await rpc<string>(a.rpcUrl, 'eth_getTransactionCount', [a.fundedAccount.address, 'latest'])).toBe(nonceBefore);
  });

  it('funds native coin and tokens from the faucet, with exact decimal amounts', async () => {
    const [usdc, , dai] = await deployTestTokens(a.rpcUrl, a.fundedAccount.privateKey);
    const to = freshAddress();
    const key = a.fundedAccount.privateKey;
    // Concurrent sends from one account must not collide on nonces.
    const results = await Promise.all([
      fundFromFaucet(a.rpcUrl, key, { to, amount: '1.5' }),
      fundFromFaucet(a.rpcUrl, key, { to, token: usdc, amount: '12.345678' }),
      fundFromFaucet(a.rpcUrl, key, { to, token: dai, amount: '0.000000000000000001' }),
      fundFromFaucet(a.rpcUrl, key, { to, token: dai, amount: '0.1' }),
    ]);
    for (const r of results) expect(r.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await nativeBalance(a, to)).toBe(1_500_000_000_000_000_000n);
    expect(await tokenBalance(a, usdc.address, to)).toBe(12_345_678n);
    expect(await tokenBalance(a, dai.address, to)).toBe(100_000_000_000_000_001n);

    await expect(fundFromFaucet(a.rpcUrl, key, { to, token: usdc, amount: '0.0000001' })).rejects.toThrow();
    await expect(fundFromFaucet(a.rpcUrl, key, { to, amount: '-1' })).rejects.toThrow();
    await expect(fundFromFaucet(a.rpcUrl, key, { to, amount: '0' })).rejects.toThrow(/positive/);
    await expect(fundFromFaucet(a.rpcUrl, key, { to: '0x1234', amount: '1' })).rejects.toThrow();
  });

  it('advances the block number by interval mining, with no transactions', async () => {
    const [a0, b0] = await Promise.all([blockNumber(a), blockNumber(b)]);
    await sleep(2200);
    const [a1, b1] = await Promise.all([blockNumber(a), blockNumber(b)]);
    expect(a1 - a0).toBeGreaterThanOrEqual(1); // default 1000 ms interval
    expect(b1 - b0).toBeGreaterThanOrEqual(5); // 200 ms interval
  });

  it('snapshot/revert removes a mined transfer', async () => {
    const to = freshAddress();
    const id = await snapshot(a.rpcUrl);
    const before = await blockNumber(a);
    const { txHash } = await fundFromFaucet(a.rpcUrl, a.fundedAccount.privateKey, { to, amount: '2' });
    expect(await nativeBalance(a, to)).toBe(ethers.parseEther('2'));
    expect(await rpc(a.rpcUrl, 'eth_getTransactionReceipt', [txHash])).not.toBeNull();

    await revert(a.rpcUrl, id);
    expect(await rpc(a.rpcUrl, 'eth_getTransactionReceipt', [txHash])).toBeNull();
    expect(await rpc(a.rpcUrl, 'eth_getTransactionByHash', [txHash])).toBeNull();
    expect(await nativeBalance(a, to)).toBe(0n);
    // The chain went back (interval mining may already have added a block since).
    expect(await blockNumber(a)).toBeLessThanOrEqual(before + 1);
    await expect(revert(a.rpcUrl, id)).rejects.toThrow(/snapshot/);
  });

  it('restarts with the same token addresses, mines on demand with automine off, and stop() frees the port', async () => {
    const first = await startDevChain({ chainId: 31339, blockIntervalMs: 0 });
    let second: DevChain | undefined;
    try {
      const tokens = await deployTestTokens(first.rpcUrl, first.fundedAccount.privateKey);

      // Automine off and no interval mining: the transfer waits until mine().
      await setAutomine(first.rpcUrl, false);
      const to = freshAddress();
      const height = await blockNumber(first);
      const { txHash } = await fundFromFaucet(first.rpcUrl, first.fundedAccount.privateKey, { to, amount: '3', wait: false });
      expect(await rpc(first.rpcUrl, 'eth_getTransactionReceipt', [txHash])).toBeNull();
      await mine(first.rpcUrl, 3);
      expect(await blockNumber(first)).toBe(height + 3);
      expect(await rpc(first.rpcUrl, 'eth_getTransactionReceipt', [txHash])).toMatchObject({ blockNumber: ethers.toQuantity(height + 1) });
      await setAutomine(first.rpcUrl, true);

      const { port, pid } = first;
      await first.stop();
      await first.stop(); // idempotent
      expect(processExists(pid)).toBe(false);
      expect(await portIsFree(port)).toBe(true);
      await expect(rpc(first.rpcUrl, 'eth_chainId', [], 1000)).rejects.toThrow();

      // Same chain id, explicitly on the port just freed: a fresh chain, same deployment addresses.
      second = await startDevChain({ chainId: 31339, port, blockIntervalMs: 0 });
      expect(second.rpcUrl).toBe(first.rpcUrl);
      expect(await blockNumber(second)).toBe(0);
      expect(await deployTestTokens(second.rpcUrl, second.fundedAccount.privateKey)).toEqual(tokens);
    } finally {
      await first.stop();
      await second?.stop();
    }
  });

  it('fails fast with the node output when the port is taken, and rejects bad options', async () => {
    // The node's own exit (not the start-up timeout) is what rejects: its output names the taken port.
    await expect(startDevChain({ chainId: 31340, port: a.port })).rejects.toThrow(/31340 exited[\s\S]*EADDRINUSE/);
    await expect(startDevChain({ chainId: 0 })).rejects.toThrow(/chainId/);
    await expect(startDevChain({ chainId: 1, host: '0.0.0.0' as '127.0.0.1' })).rejects.toThrow(/127\.0\.0\.1/);
    // The chain holding that port is unaffected.
    expect(Number(await rpc<string>(a.rpcUrl, 'eth_chainId'))).toBe(31337);
  });

  it('derives further funded dev accounts from the mnemonic', async () => {
    const second = devChainAccount(1);
    expect(second.address).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
    expect(await nativeBalance(a, second.address)).toBeGreaterThan(0n);
  });
});
