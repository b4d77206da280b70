/**
 * `keel dev solana-devnet` runs the sandbox Solana network in the foreground; `keel dev solana-fund`
 * funds from its faucet out of another process; a kit client sees the grant.
 */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createSolanaRpc, generateKeyPairSigner, Signature } from '@solana/kit';
import { eventually } from '../../support/eventually';

const ROOT = join(__dirname, '..', '..', '..');
const KEEL = ['-r', join(ROOT, 'test', 'support', 'swc-register.js'), join(ROOT, 'src', 'cli', 'main.ts')];

let devnet: ChildProcess;
let rpcUrl: string;
let mints: { symbol: string; address: string }[];

beforeAll(async () => {
  devnet = spawn(process.execPath, [...KEEL, 'dev', 'solana-devnet', '--port', '0', '--slot-ms', '50'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LOG_LEVEL: 'silent' } });
  const first = await new Promise<string>((resolve, reject) => {
    let out = '';
    devnet.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    devnet.once('exit', (code) => reject(new Error(`keel dev solana-devnet exited (${code})`)));
  });
  ({ rpcUrl, mints } = JSON.parse(first) as { rpcUrl: string; mints: { symbol: string; address: string }[] });
}, 60_000);

afterAll(async () => {
  if (devnet.exitCode === null) {
    const exited = new Promise((r) => devnet.once('exit', r));
    devnet.kill('SIGTERM');
    await exited;
  }
});

const fund = async (args: string[]) => {
  const { stdout } = await promisify(execFile)(process.execPath, [...KEEL, 'dev', 'solana-fund', '--rpc-url', rpcUrl, ...args], { cwd: ROOT, timeout: 60_000 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as { signature: string; asset: string; amount: string };
};

test('the network answers on the printed URL with the test mints; solana-fund grants SOL and USDC from another process', async () => {
  const rpc = createSolanaRpc(rpcUrl);
  expect(await rpc.getHealth().send()).toBe('ok');
  expect(mints.map((m) => m.symbol)).toEqual(['USDC', 'USDT']);
  const who = await generateKeyPairSigner();
  expect(await fund(['--address', who.address, '--amount', '1.5'])).toMatchObject({ asset: 'SOL', amount: '1500000000' });
  const usdc = await fund(['--address', who.address, '--asset', 'usdc', '--amount', '12.25']);
  expect(usdc).toMatchObject({ asset: 'USDC', amount: '12250000' });
  await eventually(async () => (await rpc.getSignatureStatuses([usdc.signature as Signature]).send()).value[0]?.confirmationStatus === 'confirmed', 20_000, 20);
  expect((await rpc.getBalance(who.address, { commitment: 'confirmed' }).send()).value).toBe(1_500_000_000n);
  const { value } = await rpc.getTokenAccountsByOwner(who.address, { mint: mints[0].address as never }, { encoding: 'jsonParsed', commitment: 'confirmed' }).send();
  expect(value[0].account.data.parsed.info.tokenAmount.uiAmountString).toBe('12.25');
}, 120_000);

test('solana-fund refuses what it cannot send: an unknown asset, a bad amount, an address that is not Solana\'s', async () => {
  const who = await generateKeyPairSigner();
  await expect(fund(['--address', who.address, '--asset', 'DAI', '--amount', '1'])).rejects.toThrow(/Unknown asset 'DAI'/);
  await expect(fund(['--address', who.address, '--asset', 'USDC', '--amount', '0.0000001'])).rejects.toThrow(/not a positive amount/);
  await expect(fund(['--address', '0x5FbDB2315678afecb367f032d93F642f64180aa3', '--amount', '1'])).rejects.toThrow(/not a Solana address/);
}, 120_000);
