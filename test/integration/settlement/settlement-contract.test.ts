import { ethers } from 'ethers';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { rpc } from '../../../src/platform/chain/json-rpc';
import type { DevChain } from '../../../src/platform/chain/devchain';
import { loadTestTokenArtifact, TestToken } from '../../../src/platform/chain/test-tokens';
import { ChainDelta, deploySettlementContract, NATIVE_TOKEN, revertReason, settleCalldata, settlementInterface } from '../../../src/modules/settlement/settlement-contract';
import { startOwnChain } from '../../support/own-chain';

/**
 * KeelSettlement's rules, straight on a private dev chain: only the operator settles; a batch is
 * all or nothing, cannot create value, and a trade key settles once; fees go to the fee recipient;
 * funds leave only to their owners, and an account gets its funds out by itself after its exit
 * delay if the operator stops.
 */
const CHAIN_ID = 31_372;
const EXIT_DELAY = 3_600;
let chain: DevChain;
let provider: ethers.JsonRpcProvider;
let usdc: TestToken;
let address: string;
let contract: ethers.Contract;
const operator = () => new ethers.NonceManager(new ethers.Wallet(devChainAccount(7).privateKey, provider));
const alice = () => new ethers.Wallet(devChainAccount(1).privateKey, provider);
const bob = () => new ethers.Wallet(devChainAccount(2).privateKey, provider);
const feeRecipient = devChainAccount(8).address;
let nextKey = 1n;

async function settle(signer: ethers.Signer, keys: bigint[], deltas: ChainDelta[]): Promise<string | null> {
  try {
    await (await signer.sendTransaction({ to: address, data: settleCalldata(crypto.randomUUID(), keys, deltas) })).wait();
    return null;
  } catch (e) {
    return revertReason(e);
  }
}
const balance = (token: string, account: string): Promise<bigint> => contract.balanceOf(token, account);
const USDC = (n: string) => ethers.parseUnits(n, 6);

beforeAll(async () => {
  ({ chain, tokens: [usdc] } = await startOwnChain(CHAIN_ID, 1));
  provider = new ethers.JsonRpcProvider(chain.rpcUrl, CHAIN_ID, { staticNetwork: true, cacheTimeout: -1, pollingInterval: 20 });
  const deployer = new ethers.NonceManager(new ethers.Wallet(devChainAccount(0).privateKey, provider));
  ({ address } = await deploySettlementContract(deployer, { operator: devChainAccount(7).address, feeRecipient, exitDelaySeconds: EXIT_DELAY }));
  contract = new ethers.Contract(address, settlementInterface(), provider);
  // Alice: 1,000 USDC in the contract; Bob: 2 ETH.
  await (await new ethers.Contract(usdc.address, loadTestTokenArtifact().abi, deployer).transfer(alice().address, USDC('1000'))).wait();
  await (await new ethers.Contract(usdc.address, loadTestTokenArtifact().abi, alice()).approve(address, ethers.MaxUint256)).wait();
  await (await (contract.connect(alice()) as ethers.Contract).deposit(usdc.address, USDC('1000'))).wait();
  await (await (contract.connect(bob()) as ethers.Contract).depositNative({ value: ethers.parseEther('2') })).wait();
}, 60_000);
afterAll(async () => {
  provider?.destroy();
  await chain?.stop();
});

test('deposits are credited to the depositor', async () => {
  expect(await balance(usdc.address, alice().address)).toBe(USDC('1000'));
  expect(await balance(NATIVE_TOKEN, bob().address)).toBe(ethers.parseEther('2'));
});

test('the operator settles a netted batch; the fees go to the fee recipient; a replay is refused', async () => {
  // Alice buys 1 ETH from Bob at 500 USDC; Alice pays 1 USDC fee, Bob 0.5.
  const keys = [nextKey++, nextKey++];
  const deltas: ChainDelta[] = [
    { account: alice().address, token: usdc.address, amount: -USDC('501') },
    { account: bob().address, token: usdc.address, amount: USDC('499.5') },
    { account: alice().address, token: NATIVE_TOKEN, amount: ethers.parseEther('1') },
    { account: bob().address, token: NATIVE_TOKEN, amount: -ethers.parseEther('1') },
  ];
  expect(await settle(operator(), keys, deltas)).toBeNull();
  expect(await balance(usdc.address, alice().address)).toBe(USDC('499'));
  expect(await balance(usdc.address, bob().address)).toBe(USDC('499.5'));
  expect(await balance(usdc.address, feeRecipient)).toBe(USDC('1.5'));
  expect(await balance(NATIVE_TOKEN, alice().address)).toBe(ethers.parseEther('1'));
  for (const k of keys) expect(await contract.isSettled(k)).toBe(true);
  expect(await settle(operator(), keys, deltas)).toBe(`TradeAlreadySettled(${keys[0]})`);
  expect(await settle(operator(), [keys[1], nextKey++], [])).toBe(`TradeAlreadySettled(${keys[1]})`);
});

test('only the operator may settle or release; a batch that creates value, overdraws or is unsorted changes nothing', async () => {
  const key = nextKey++;
  const pay: ChainDelta[] = [{ account: bob().address, token: usdc.address, amount: USDC('1') }];
  expect(await settle(alice(), [key], pay)).toBe('NotOperator()');
  expect(await settle(operator(), [key], pay)).toBe(`ValueCreated(${usdc.address})`);
  expect(await settle(operator(), [key], [{ account: alice().address, token: usdc.address, amount: -USDC('10000') }])).toBe(`InsufficientBalance(${alice().address}, ${usdc.address}, ${USDC('499')}, ${USDC('10000')})`);
  const raw = settlementInterface().encodeFunctionData('settle', [ethers.zeroPadBytes('0x01', 16), ethers.toBeHex(key, 8), [[alice().address, usdc.address, -1n], [alice().address, NATIVE_TOKEN, 0n]]]);
  await expect(operator().sendTransaction({ to: address, data: raw })).rejects.toBeDefined();
  expect(await contract.isSettled(key)).toBe(false);
  await expect((contract.connect(alice()) as ethers.Contract).release([alice().address], [usdc.address])).rejects.toBeDefined();
});

test('the operator releases balances only to their owners; the fee recipient claims its fees', async () => {
  const before = await provider.getBalance(alice().address);
  await (await (contract.connect(operator()) as ethers.Contract).release([alice().address], [NATIVE_TOKEN])).wait();
  expect(await provider.getBalance(alice().address)).toBe(before + ethers.parseEther('1'));
  expect(await balance(NATIVE_TOKEN, alice().address)).toBe(0n);
  await (await (contract.connect(bob()) as ethers.Contract).claimFees(usdc.address)).wait();
  expect(await new ethers.Contract(usdc.address, loadTestTokenArtifact().abi, provider).balanceOf(feeRecipient)).toBe(USDC('1.5'));
});

test('escape hatch: without the operator, an account withdraws its own balance after its exit delay', async () => {
  const asBob = contract.connect(bob()) as ethers.Contract;
  await expect(asBob.exit(usdc.address)).rejects.toBeDefined(); // no exit requested
  await (await asBob.requestExit()).wait();
  expect(await provider.call({ from: bob().address, to: address, data: settlementInterface().encodeFunctionData('exit', [usdc.address]) }).catch((e) => revertReason(e))).toMatch(/^ExitNotReady\(/);
  await rpc(chain.rpcUrl, 'evm_increaseTime', [EXIT_DELAY]);
  await (await asBob.exit(usdc.address)).wait();
  await (await asBob.exit(NATIVE_TOKEN)).wait();
  expect(await balance(usdc.address, bob().address)).toBe(0n);
  expect(await balance(NATIVE_TOKEN, bob().address)).toBe(0n);
  expect(await new ethers.Contract(usdc.address, loadTestTokenArtifact().abi, provider).balanceOf(bob().address)).toBe(USDC('499.5'));
});
