import { ethers } from 'ethers';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { rpc } from '../../../src/platform/chain/json-rpc';
import type { DevChain } from '../../../src/platform/chain/devchain';
import { loadTestTokenArtifact, TestToken } from '../../../src/platform/chain/test-tokens';
import { ChainDelta, ChainWithdrawal, contractVersion, deploySettlementContract, SETTLEMENT_CONTRACT_VERSION, NATIVE_TOKEN, readTokenSlots, revertReason, settleCalldata, settlementInterface, signWithdrawal, withdrawCalldata } from '../../../src/modules/settlement/settlement-contract';
import { startOwnChain } from '../../support/own-chain';
import { checkedPermit, permitTerms } from '../../../src/modules/settlement/token-permits';
import { loadArtifact } from '../../../src/platform/chain/artifacts';

/**
 * KeelSettlement's rules, straight on a private dev chain: deposits (own or for another account)
 * are credited to the account; only the operator settles, and a batch moves balances inside the
 * contract only, all or nothing, cannot create value, and a trade key settles once; fees go to the
 * fee recipient; funds leave only through a withdrawal the account signed (to any address, each
 * once), submitted by the operator, and an account gets its funds out by itself after its exit
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
let nextWithdrawalKey = 1n;

async function settle(signer: ethers.Signer, keys: bigint[], deltas: ChainDelta[]): Promise<string | null> {
  try {
    const where = await readTokenSlots(provider, address, [NATIVE_TOKEN, usdc.address]);
    await (await signer.sendTransaction({ to: address, data: settleCalldata(crypto.randomUUID(), keys, deltas, where) })).wait();
    return null;
  } catch (e) {
    return revertReason(e);
  }
}
const balance = (token: string, account: string): Promise<bigint> => contract.balanceOf(token, account);
const USDC = (n: string) => ethers.parseUnits(n, 6);
const tokenBalance = (account: string): Promise<bigint> => new ethers.Contract(usdc.address, loadTestTokenArtifact().abi, provider).balanceOf(account);

/** Sends a withdrawal signed by `signer` from `sender`: null when mined, else the revert reason. */
async function withdraw(sender: ethers.Signer, w: ChainWithdrawal, signer: ethers.Signer = alice()): Promise<string | null> {
  const signature = await signWithdrawal(signer, address, CHAIN_ID, w);
  try {
    await (await sender.sendTransaction({ to: address, data: withdrawCalldata([{ withdrawal: w, signature }]) })).wait();
    return null;
  } catch (e) {
    return revertReason(e);
  }
}

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

test('the contract states the version of settle calldata it reads; an address without it reads as version 0 (Keel settles through neither)', async () => {
  expect(await contractVersion(provider, address)).toBe(SETTLEMENT_CONTRACT_VERSION);
  expect(await contractVersion(provider, usdc.address)).toBe(0n);
  expect(await contractVersion(provider, ethers.Wallet.createRandom().address)).toBe(0n);
});

test('deposits are credited to the depositor, or to the account a deposit is made for', async () => {
  expect(await balance(usdc.address, alice().address)).toBe(USDC('1000'));
  expect(await balance(NATIVE_TOKEN, bob().address)).toBe(ethers.parseEther('2'));
  // Carol deposits for Dave (an account holding nothing, not even gas): credited to Dave.
  const carol = new ethers.Wallet(devChainAccount(3).privateKey, provider);
  const dave = ethers.Wallet.createRandom().address;
  await (await (contract.connect(carol) as ethers.Contract).depositNativeFor(dave, { value: 5n })).wait();
  expect(await balance(NATIVE_TOKEN, dave)).toBe(5n);
  expect(await balance(NATIVE_TOKEN, carol.address)).toBe(0n);
});

test('depositWithCoin: a token and the coin in one transaction, by an EIP-2612 permit instead of an approval; a permit someone used first is ignored', async () => {
  const erin = ethers.Wallet.createRandom().connect(provider);
  const deployer = new ethers.NonceManager(new ethers.Wallet(devChainAccount(0).privateKey, provider));
  await (await deployer.sendTransaction({ to: erin.address, value: ethers.parseEther('1') })).wait();
  await (await new ethers.Contract(usdc.address, loadTestTokenArtifact().abi, deployer).transfer(erin.address, USDC('30'))).wait();
  const token = new ethers.Contract(usdc.address, loadTestTokenArtifact().abi, provider);
  const permit = async (value: bigint) => {
    const deadline = BigInt(Math.floor(Date.now() / 1000) + 3_600);
    const domain = { name: await token.name(), version: '1', chainId: CHAIN_ID, verifyingContract: usdc.address };
    const types = { Permit: [{ name: 'owner', type: 'address' }, { name: 'spender', type: 'address' }, { name: 'value', type: 'uint256' }, { name: 'nonce', type: 'uint256' }, { name: 'deadline', type: 'uint256' }] };
    const sig = ethers.Signature.from(await erin.signTypedData(domain, types, { owner: erin.address, spender: address, value, nonce: await token.nonces(erin.address), deadline }));
    return [deadline, sig.v, sig.r, sig.s] as const;
  };
  const asErin = contract.connect(erin) as ethers.Contract;
  // No approval: the permit lets the contract take exactly the amount, and the coin comes with the call.
  const signed = await permit(USDC('20'));
  await (await asErin.depositWithCoin(usdc.address, USDC('20'), ...signed, { value: 7n })).wait();
  expect(await balance(usdc.address, erin.address)).toBe(USDC('20'));
  expect(await balance(NATIVE_TOKEN, erin.address)).toBe(7n);
  expect(await token.allowance(erin.address, address)).toBe(0n);
  // The same permit again (as if someone had submitted it first): ignored, and without an allowance the transfer is refused.
  await expect(asErin.depositWithCoin(usdc.address, USDC('10'), ...signed)).rejects.toThrow();
  // Ignored too when an allowance stands: the deposit takes it.
  await (await (token.connect(erin) as ethers.Contract).approve(address, USDC('10'))).wait();
  await (await asErin.depositWithCoin(usdc.address, USDC('10'), ...signed)).wait();
  // The coin alone (amount 0, no permit).
  await (await asErin.depositWithCoin(ethers.ZeroAddress, 0n, 0n, 0, ethers.ZeroHash, ethers.ZeroHash, { value: 3n })).wait();
  expect(await balance(usdc.address, erin.address)).toBe(USDC('30'));
  expect(await balance(NATIVE_TOKEN, erin.address)).toBe(10n);
});

test("Keel's permit check: a token with EIP-2612 gets a permit the token takes (and depositWithCoin with it needs no approval); a token without permit gets none", async () => {
  const frank = ethers.Wallet.createRandom().connect(provider);
  const deployer = new ethers.NonceManager(new ethers.Wallet(devChainAccount(0).privateKey, provider));
  await (await deployer.sendTransaction({ to: frank.address, value: ethers.parseEther('1') })).wait();
  await (await new ethers.Contract(usdc.address, loadTestTokenArtifact().abi, deployer).transfer(frank.address, USDC('5'))).wait();
  const terms = await permitTerms(provider, usdc.address, CHAIN_ID, frank.address);
  expect(terms).toMatchObject({ domain: { name: usdc.name, version: '1', chainId: CHAIN_ID }, nonce: 0n });
  const signed = await checkedPermit(provider, async () => frank, usdc.address, CHAIN_ID, frank.address, address, USDC('5'));
  expect(signed).not.toBeNull();
  await (await (contract.connect(frank) as ethers.Contract).depositWithCoin(usdc.address, USDC('5'), signed!.deadline, signed!.v, signed!.r, signed!.s)).wait();
  expect(await balance(usdc.address, frank.address)).toBe(USDC('5'));
  // A permit the token would refuse (signed by someone else) is not offered.
  expect(await checkedPermit(provider, async () => alice(), usdc.address, CHAIN_ID, frank.address, address, USDC('1'))).toBeNull();

  const { abi, bytecode } = loadArtifact('TestTokenPlain');
  const plain = await (await new ethers.ContractFactory(abi, bytecode, deployer).deploy('Plain Dollar', 'PLAIN', 1_000_000n)).waitForDeployment();
  expect(await permitTerms(provider, await plain.getAddress(), CHAIN_ID, frank.address)).toBeNull();
  expect(await checkedPermit(provider, async () => frank, await plain.getAddress(), CHAIN_ID, frank.address, address, 1n)).toBeNull();
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

test('trade keys go as runs of consecutive keys: a batch across bitmap words and with gaps settles each key once, and any key settled before refuses the whole batch', async () => {
  const start = (nextKey | 255n) + 200n; // near the end of a bitmap word
  const keys = [...Array.from({ length: 300 }, (_, i) => start + BigInt(i)), start + 400n, start + 402n];
  nextKey = start + 403n;
  expect(await settle(operator(), keys, [])).toBeNull();
  for (const k of [start, start + 55n, start + 56n, start + 299n, start + 400n, start + 402n]) expect(await contract.isSettled(k)).toBe(true);
  for (const k of [start - 1n, start + 300n, start + 401n]) expect(await contract.isSettled(k)).toBe(false);
  // A run overlapping keys settled before, in the middle: refused at the first of them, and nothing of it is marked.
  expect(await settle(operator(), [start + 300n, start + 301n, start + 401n, start + 402n, start + 403n], [])).toBe(`TradeAlreadySettled(${start + 402n})`);
  expect(await contract.isSettled(start + 300n)).toBe(false);
});

test('only the operator may settle; a batch that creates value, overdraws or is unsorted changes nothing', async () => {
  const key = nextKey++;
  const pay: ChainDelta[] = [{ account: bob().address, token: usdc.address, amount: USDC('1') }];
  expect(await settle(alice(), [key], pay)).toBe('NotOperator()');
  expect(await settle(operator(), [key], pay)).toBe(`ValueCreated(${usdc.address})`);
  expect(await settle(operator(), [key], [{ account: alice().address, token: usdc.address, amount: -USDC('10000') }])).toBe(`InsufficientBalance(${alice().address}, ${usdc.address}, ${USDC('499')}, ${USDC('10000')})`);
  // A balance slot holds the tokens at indices 2k and 2k+1 (here the native coin and USDC), named in that order; slots come
  // in ascending order, each once; a change is sign-magnitude (top bit: a debit); deltas must be whole records.
  const change = (amount: bigint) => ethers.toBeHex(amount < 0n ? (1n << 127n) | -amount : amount, 16);
  const group = (low: string, high: string, account: string, lowChange: bigint, highChange: bigint) => [low, high, ethers.toBeHex(1, 2), account, change(lowChange), change(highChange)];
  const run = ethers.concat([ethers.toBeHex(key, 8), ethers.toBeHex(1, 4)]);
  const raw = (deltas: string[]) => settlementInterface().encodeFunctionData('settle', [ethers.zeroPadBytes('0x01', 16), run, ethers.concat(deltas)]);
  const call = (data: string) => provider.call({ from: devChainAccount(7).address, to: address, data }).then(() => null, (e) => revertReason(e));
  expect(await call(raw(group(NATIVE_TOKEN, usdc.address, bob().address, 0n, USDC('1'))))).toBe(`ValueCreated(${usdc.address})`);
  expect(await call(raw(group(NATIVE_TOKEN, usdc.address, alice().address, 0n, -USDC('500'))))).toBe(`InsufficientBalance(${alice().address}, ${usdc.address}, ${USDC('499')}, ${USDC('500')})`);
  // Tokens the contract does not hold at those indices (in the wrong order, or a pair a reorg could have given away): refused.
  expect(await call(raw(group(usdc.address, NATIVE_TOKEN, alice().address, -1n, 0n)))).toBe(`WrongTokenPair(${usdc.address}, ${NATIVE_TOKEN})`);
  expect(await call(raw(group(NATIVE_TOKEN, NATIVE_TOKEN, alice().address, 0n, 0n)))).toBe(`WrongTokenPair(${NATIVE_TOKEN}, ${NATIVE_TOKEN})`);
  const stranger = ethers.Wallet.createRandom().address;
  expect(await call(raw(group(stranger, usdc.address, alice().address, 0n, 0n)))).toBe(`WrongTokenPair(${stranger}, ${usdc.address})`);
  const twice = raw([...group(NATIVE_TOKEN, usdc.address, alice().address, 0n, 0n), ...group(NATIVE_TOKEN, usdc.address, bob().address, 0n, 0n)]);
  expect(await call(twice)).toBe('UnsortedDeltas(94)');
  const short = group(NATIVE_TOKEN, usdc.address, alice().address, 0n, -1n);
  short[2] = ethers.toBeHex(2, 2); // says two records, holds one
  expect(await call(raw(short))).toBe('BadDeltas()');
  expect(await call(raw(group(NATIVE_TOKEN, usdc.address, alice().address, 0n, -1n).slice(0, 5)))).toBe('BadDeltas()');
  expect(await contract.isSettled(key)).toBe(false);
});

test('a withdrawal the account signed is paid out by the operator, to the account or another address, once', async () => {
  const external = ethers.Wallet.createRandom().address;
  const w = (over: Partial<ChainWithdrawal> = {}): ChainWithdrawal => ({ key: nextWithdrawalKey++, account: alice().address, token: usdc.address, amount: USDC('100'), to: external, ...over });
  const first = w();
  expect(await withdraw(operator(), first)).toBeNull();
  expect(await tokenBalance(external)).toBe(USDC('100'));
  expect(await balance(usdc.address, alice().address)).toBe(USDC('399'));
  expect(await contract.isWithdrawn(first.key)).toBe(true);
  // The same key again (a replayed transaction or signature): refused.
  expect(await withdraw(operator(), first)).toBe(`AlreadyWithdrawn(${first.key})`);
  // Only the operator submits, and only what the account itself signed.
  expect(await withdraw(alice(), w())).toBe('NotOperator()');
  const forged = w();
  expect(await withdraw(operator(), forged, bob())).toBe(`NotSignedByAccount(${forged.key})`);
  // The signature covers every field: the operator cannot redirect a signed withdrawal.
  const signed = w();
  const signature = await signWithdrawal(alice(), address, CHAIN_ID, signed);
  const redirected = operator().sendTransaction({ to: address, data: withdrawCalldata([{ withdrawal: { ...signed, to: feeRecipient }, signature }]) });
  expect(await redirected.then(() => null, (e) => revertReason(e))).toBe(`NotSignedByAccount(${signed.key})`);
  // Never more than the balance; to the account's own address in the native coin as well.
  expect(await withdraw(operator(), w({ amount: USDC('400') }))).toBe(`InsufficientBalance(${alice().address}, ${usdc.address}, ${USDC('399')}, ${USDC('400')})`);
  const before = await provider.getBalance(alice().address);
  expect(await withdraw(operator(), w({ token: NATIVE_TOKEN, amount: ethers.parseEther('1'), to: alice().address }))).toBeNull();
  expect(await provider.getBalance(alice().address)).toBe(before + ethers.parseEther('1'));
  expect(await balance(NATIVE_TOKEN, alice().address)).toBe(0n);
});

test('the operator has no call that moves a balance out by itself; the fee recipient claims its fees', async () => {
  expect(settlementInterface().getFunction('release')).toBeNull();
  await (await (contract.connect(bob()) as ethers.Contract).claimFees(usdc.address)).wait();
  expect(await tokenBalance(feeRecipient)).toBe(USDC('1.5'));
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
