/**
 * The chain port's EVM implementation against a Hardhat dev chain: addresses (EIP-55 checksums),
 * heights by confirmation count, native / ERC-20 / NFT balances, blocks scanned for transfers to and
 * from watched addresses (native, ERC-20, ERC-721, ERC-1155 with token ids; reverted ones left out;
 * parent hashes), block hashes and times, gas estimates (refused when the transfer would fail), and
 * transfers sent at most once (sendOnce over prepare / broadcast / outcome, a nonce taken by another
 * transaction reading as expired).
 */
import { ethers } from 'ethers';
import { DevChain, startDevChain } from '../../../src/platform/chain/devchain';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';
import { deployTestTokens, TestToken } from '../../../src/platform/chain/test-tokens';
import { deployTestNfts, mintTestNft, TestNft } from '../../../src/platform/chain/test-nfts';
import { fundFromFaucet } from '../../../src/platform/chain/faucet';
import { mine } from '../../support/chain-controls';
import { jsonRpcProvider } from '../../../src/modules/chains';
import { EvmChain } from '../../../src/platform/chain-port/evm-chain';
import { ChainMovedError, NATIVE_TRANSFER_INDEX, PreparedTransfer, PreparedTransferStore, TransferRefused, sendOnce } from '../../../src/platform/chain-port/chain-port';

const CONFIRMATIONS = 3;
const ETH = 10n ** 18n;
let dev: DevChain;
let chain: EvmChain;
let usdc: TestToken;
let nfts: TestNft[];
const deployer = devChainAccount(0);

beforeAll(async () => {
  dev = await startDevChain({ chainId: 31337, blockIntervalMs: 0 });
  [usdc] = await deployTestTokens(dev.rpcUrl, deployer.privateKey);
  nfts = await deployTestNfts(dev.rpcUrl);
  chain = new EvmChain({ provider: jsonRpcProvider(dev.rpcUrl, 31337), chainId: 31337, confirmations: CONFIRMATIONS });
}, 120_000);

afterAll(async () => {
  chain?.provider.destroy();
  await dev?.stop();
});

function memoryStore(): PreparedTransferStore & { saved: PreparedTransfer[] } {
  const saved: PreparedTransfer[] = [];
  return { saved, load: async () => saved[saved.length - 1], save: async (p) => void saved.push(p) };
}

async function funded(eth = 10n): Promise<ethers.Wallet> {
  const wallet = ethers.Wallet.createRandom().connect(chain.provider) as unknown as ethers.Wallet;
  await fundFromFaucet(dev.rpcUrl, deployer.privateKey, { to: wallet.address, amount: ethers.formatEther(eth * ETH) });
  return wallet;
}

test('addresses: an EIP-55 checksum is checked when the case is mixed; a Solana address is not one', () => {
  const address = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'; // EIP-55's own example
  expect(chain.isAddress(address)).toBe(true);
  expect(chain.isAddress(address.toLowerCase())).toBe(true);
  expect(chain.isAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD')).toBe(false);
  expect(chain.isAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA')).toBe(false);
  expect(chain.isAddress('4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T')).toBe(false);
});

test('heights: the head when seen, the newest block with the confirmation count when confirmed or final', async () => {
  await mine(dev.rpcUrl, CONFIRMATIONS + 1);
  const head = await chain.provider.getBlockNumber();
  expect(await chain.height('seen')).toBe(head);
  expect(await chain.height('confirmed')).toBe(head - CONFIRMATIONS + 1);
  expect(await chain.height('final')).toBe(head - CONFIRMATIONS + 1);
});

test('a scan reads native, ERC-20 and NFT transfers to and from watched addresses, leaves out other addresses, and gives blocks with parents and times', async () => {
  const watchedWallet = ethers.Wallet.createRandom().connect(chain.provider);
  const watched = watchedWallet.address;
  const other = ethers.Wallet.createRandom().address;
  const from = (await chain.height('seen')) + 1;
  const sender = await funded();
  await (await sender.sendTransaction({ to: watched, value: ETH / 4n })).wait();
  await (await sender.sendTransaction({ to: other, value: ETH / 8n })).wait();
  const erc20 = new ethers.Contract(usdc.address, ['function transfer(address to, uint256 amount) returns (bool)'], new ethers.Wallet(deployer.privateKey, chain.provider));
  await (await erc20.transfer(watched, 3_000_000n)).wait();
  const erc721 = nfts.find((n) => n.standard === 'ERC721')!;
  const erc1155 = nfts.find((n) => n.standard === 'ERC1155')!;
  const minted721 = await mintTestNft(dev.rpcUrl, deployer.privateKey, { to: watched, collection: erc721, amount: 1n });
  await mintTestNft(dev.rpcUrl, deployer.privateKey, { to: watched, collection: erc1155, tokenId: 7n, amount: 5n });
  // Outgoing: the watched address sends on (a sweep, a withdrawal seen on chain).
  const sentOn = (await (await watchedWallet.sendTransaction({ to: other, value: ETH / 100n })).wait())!;
  const to = await chain.height('seen');

  const scanned = await chain.scan(from, to, { addresses: new Set([watched.toLowerCase()]), tokens: [usdc.address], nfts: nfts.map((n) => n.address) }, 'final');
  expect(scanned.blocks.map((b) => b.height)).toEqual(Array.from({ length: to - from + 1 }, (_, i) => from + i));
  for (const [i, b] of scanned.blocks.entries()) {
    expect(b.hash).toBe(await chain.blockHash(b.height, 'seen'));
    expect(b.timestamp).toBe(await chain.blockTime(b.height));
    if (i > 0) expect(b.parentHash).toBe(scanned.blocks[i - 1].hash);
  }
  const kinds = scanned.transfers.map((t) => (t.asset.kind === 'native' ? 'native' : t.tokenId === undefined ? 'erc20' : `nft:${t.tokenId}`)).sort();
  expect(kinds).toEqual(['erc20', 'native', 'native', `nft:${minted721.tokenId}`, 'nft:7'].sort());
  const natives = scanned.transfers.filter((t) => t.asset.kind === 'native');
  expect(natives.find((t) => t.to === watched)).toMatchObject({ from: sender.address, amount: ETH / 4n, index: NATIVE_TRANSFER_INDEX, batchIndex: 0, position: 'native' });
  expect(natives.find((t) => t.from === watched)).toMatchObject({ to: other, amount: ETH / 100n });
  const token = scanned.transfers.find((t) => t.asset.kind === 'token' && t.tokenId === undefined)!;
  expect(token).toMatchObject({ to: watched, amount: 3_000_000n, asset: { kind: 'token', address: usdc.address } });
  expect(token.index).toBeGreaterThanOrEqual(0);
  expect(scanned.transfers.find((t) => t.tokenId === 7n)).toMatchObject({ amount: 5n, asset: { kind: 'token', address: ethers.getAddress(erc1155.address) } });
  // The sender's transfer to the other (unwatched) address is not reported.
  expect(scanned.transfers.filter((t) => t.to === other)).toHaveLength(1);
  // The fee of what the watched address sent is reported (gas used × effective gas price); what others sent it is not its fee.
  expect(scanned.fees).toEqual([{ txId: sentOn.hash, from: watched, height: sentOn.blockNumber, blockHash: sentOn.blockHash, fee: sentOn.gasUsed * sentOn.gasPrice }]);

  // Balances of each kind, and an NFT's by its token id.
  expect(await chain.balance(other, { kind: 'native' })).toBe(ETH / 8n + ETH / 100n);
  expect(await chain.balance(watched, { kind: 'token', address: usdc.address, decimals: 6 })).toBe(3_000_000n);
  expect(await chain.balance(watched, { kind: 'nft', address: erc721.address, standard: 'ERC721', tokenId: minted721.tokenId })).toBe(1n);
  expect(await chain.balance(watched, { kind: 'nft', address: erc1155.address, standard: 'ERC1155', tokenId: 7n })).toBe(5n);
  expect(await chain.balance(other, { kind: 'nft', address: erc721.address, standard: 'ERC721', tokenId: minted721.tokenId })).toBe(0n);
}, 60_000);

test('a scan that spans a block no longer there (a reorganisation, a rewound chain) throws ChainMovedError', async () => {
  const head = await chain.height('seen');
  await expect(chain.scan(head, head + 5, { addresses: new Set() }, 'final')).rejects.toBeInstanceOf(ChainMovedError);
  expect(await chain.blockHash(head + 5, 'seen')).toBeNull();
  expect(await chain.blockTime(head + 5)).toBeNull();
  // A height the node has no block at is one it has not reached (not "no block there"), as is one above its final height.
  expect(await chain.blockAt(head + 5, 'seen')).toBe('unknown');
  expect(await chain.blockAt(head, 'final')).toBe('unknown'); // CONFIRMATIONS deep: the head is not final yet
  expect(await chain.blockAt(head, 'seen')).toEqual({ hash: await chain.blockHash(head, 'seen') });
});

test('estimates: the gas of a transfer at the node fees; a token transfer that would revert (no balance) is refused', async () => {
  const sender = await funded(1n);
  const to = ethers.Wallet.createRandom().address;
  const estimate = await chain.estimateTransfer(sender.address, { to, asset: { kind: 'native' }, amount: ETH / 10n });
  const gas = await chain.provider.estimateGas({ from: sender.address, to, value: ETH / 10n });
  expect(gas).toBeGreaterThanOrEqual(21_000n);
  expect(estimate.units).toBe(gas);
  const fees = await chain.provider.getFeeData();
  expect(estimate.fee).toBe(gas * fees.maxFeePerGas!);
  expect(estimate).toMatchObject({ accountCreation: 0n, nativeNeeded: ETH / 10n + estimate.fee });
  const token = await chain.estimateTransfer(deployer.address, { to, asset: { kind: 'token', address: usdc.address, decimals: 6 }, amount: 1n });
  expect(token.units).toBeGreaterThan(21_000n);
  await expect(chain.estimateTransfer(sender.address, { to, asset: { kind: 'token', address: usdc.address, decimals: 6 }, amount: 1n })).rejects.toBeInstanceOf(TransferRefused);
});

test('sendOnce: prepared (recorded) before broadcast, landed once, final at the confirmation count; a retry sends nothing new', async () => {
  const sender = await funded(1n);
  const to = ethers.Wallet.createRandom().address;
  const store = memoryStore();
  const sent = await sendOnce(chain, sender, { to, asset: { kind: 'native' }, amount: ETH / 10n }, store);
  expect(store.saved).toHaveLength(1);
  expect(sent.nonce).toEqual({ from: sender.address, value: 0 });
  expect(sent.validThrough).toBeNull();
  const landed = await chain.outcome(sent);
  expect(landed).toMatchObject({ state: 'landed', failed: false, finality: 'seen' });
  await mine(dev.rpcUrl, CONFIRMATIONS);
  expect(await chain.outcome(sent)).toMatchObject({ state: 'landed', finality: 'final' });
  // The retry after a crash finds the recorded one landed: nothing new is signed or sent.
  expect(await sendOnce(chain, sender, { to, asset: { kind: 'native' }, amount: ETH / 10n }, store)).toEqual(sent);
  expect(store.saved).toHaveLength(1);
  expect(await chain.balance(to, { kind: 'native' })).toBe(ETH / 10n);
});

test('a prepared transfer whose nonce another transaction took reads as expired once that one is final; a refused one throws TransferRefused', async () => {
  const sender = await funded(1n);
  const to = ethers.Wallet.createRandom().address;
  const prepared = await chain.prepareTransfer(sender, { to, asset: { kind: 'native' }, amount: ETH / 10n });
  expect(await chain.outcome(prepared)).toEqual({ state: 'pending' });
  // Another transaction with the same nonce lands first.
  await (await sender.sendTransaction({ to: sender.address, value: 1n, nonce: prepared.nonce!.value })).wait();
  expect(await chain.outcome(prepared)).toEqual({ state: 'pending' });
  await mine(dev.rpcUrl, CONFIRMATIONS);
  expect(await chain.outcome(prepared)).toEqual({ state: 'expired' });

  const poor = ethers.Wallet.createRandom().connect(chain.provider);
  const fees = await chain.fees();
  const signed = await chain.signWithNonce(poor, { nonce: 0, gasLimit: 21_000n, fees, call: { to, value: ETH, data: '0x' } });
  const refused: PreparedTransfer = { txId: signed.txHash, raw: signed.raw, validThrough: null, validFrom: null, nonce: { from: poor.address, value: 0 }, fee: { fee: 0n, accountCreation: 0n, nativeNeeded: ETH } };
  await expect(chain.broadcast(refused)).rejects.toBeInstanceOf(TransferRefused);
});

/** Blocks mined one at a time: inside a run hardhat_mine mines at once, Hardhat counts an address's transactions wrong (0). */
async function mineEach(blocks: number): Promise<void> {
  for (let i = 0; i < blocks; i++) await mine(dev.rpcUrl, 1);
}

/** The same node as seen through one behind it (a load balancer's other backend): it shows none of `hidden` nor their receipts, and no block while `showsBlocks` is false. */
function behind(provider: ethers.JsonRpcProvider, hidden: Set<string>, showsBlocks: () => boolean): ethers.JsonRpcProvider {
  return new Proxy(provider, {
    get: (target, prop) => {
      if (prop === 'getTransactionReceipt') return async (h: string) => (hidden.has(h) ? null : target.getTransactionReceipt(h));
      if (prop === 'getTransaction') return async (h: string) => (hidden.has(h) ? null : target.getTransaction(h));
      if (prop === 'getBlock') return async (tag: ethers.BlockTag, prefetch?: boolean) => (showsBlocks() ? target.getBlock(tag, prefetch) : null);
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

test("a nonce the count says is used while no receipt of the transfer's own transaction is found (a node behind) is pending, never expired; expired once another transaction is seen at it", async () => {
  const sender = await funded(1n);
  const to = ethers.Wallet.createRandom().address;
  const prepared = await chain.prepareTransfer(sender, { to, asset: { kind: 'native' }, amount: ETH / 10n });
  await chain.broadcast(prepared);
  await mineEach(CONFIRMATIONS);
  let showsBlocks = true;
  const lagging = new EvmChain({ provider: behind(chain.provider, new Set([prepared.txId]), () => showsBlocks), chainId: 31337, confirmations: CONFIRMATIONS });
  const line = { fromAddress: sender.address, nonce: '0', txHash: prepared.txId, replacedTxHashes: [] };

  // Its block read: the transaction at the nonce is its own, its receipt not shown yet.
  expect(await lagging.outcome(prepared)).toEqual({ state: 'pending' });
  expect(await lagging.lineFate(line)).toEqual({ kind: 'undecided', reason: expect.stringContaining(prepared.txId) });
  // Not even its block shown: nothing decided either.
  showsBlocks = false;
  expect(await lagging.outcome(prepared)).toEqual({ state: 'pending' });
  expect(await lagging.lineFate(line)).toEqual({ kind: 'undecided', reason: expect.stringContaining('not available') });
  expect(await chain.outcome(prepared)).toMatchObject({ state: 'landed', finality: 'final', failed: false });

  // Another transaction took the next nonce, several blocks back: seen in its block, the line's is expired.
  showsBlocks = true;
  const next = await chain.prepareTransfer(sender, { to, asset: { kind: 'native' }, amount: ETH / 10n });
  const other = await sender.sendTransaction({ to: sender.address, value: 1n, nonce: next.nonce!.value });
  await mineEach(CONFIRMATIONS + 5);
  expect(await lagging.outcome(next)).toEqual({ state: 'expired' });
  expect(await lagging.lineFate({ ...line, nonce: '1', txHash: next.txId })).toEqual({ kind: 'taken', by: other.hash });
});
