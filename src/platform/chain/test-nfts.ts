import { ethers } from 'ethers';
import { devChainAccount } from './dev-accounts';
import { retryNonceClash, senderKey, serialized, withWallet } from './dev-sender';
import { loadArtifact } from './artifacts';

/** A test NFT collection on a dev chain: decimals 0, the standard as the asset registry writes it. */
export interface TestNft {
  symbol: string;
  name: string;
  decimals: 0;
  standard: 'ERC721' | 'ERC1155';
  address: string;
}

/** Deployed in this order by dev account #4 (used for nothing else), so their addresses follow from its nonces 0, 1. */
export const TEST_NFTS: readonly (Omit<TestNft, 'address'> & { artifact: string })[] = [
  { symbol: 'KNFT', name: 'Keel Test Collectible', decimals: 0, standard: 'ERC721', artifact: 'TestNFT721' },
  { symbol: 'KITEM', name: 'Keel Test Items', decimals: 0, standard: 'ERC1155', artifact: 'TestNFT1155' },
];
export const TEST_NFT_DEPLOYER_INDEX = 4;

/** The test collections' mint functions (anyone may mint on a dev chain). */
export const testNftMinter = new ethers.Interface([
  'function mint(address to) returns (uint256)',
  'function lastTokenId() view returns (uint256)',
  'function mint(address to, uint256 id, uint256 amount)',
  'function mintBatch(address to, uint256[] ids, uint256[] amounts)',
]);

/**
 * Deploys TEST_NFTS (an ERC-721 and an ERC-1155, OpenZeppelin 5) from dev account #4. Idempotent:
 * collections already at their predicted addresses (a restored chain) are returned as they are.
 */
export async function deployTestNfts(rpcUrl: string): Promise<TestNft[]> {
  const deployer = devChainAccount(TEST_NFT_DEPLOYER_INDEX);
  const canonical = TEST_NFTS.map((_, i) => ethers.getCreateAddress({ from: deployer.address, nonce: i }));
  const collections = (addresses: string[]) => TEST_NFTS.map(({ artifact: _, ...n }, i) => ({ ...n, address: addresses[i] }));
  return withWallet(rpcUrl, deployer.privateKey, (wallet) =>
    serialized(senderKey(rpcUrl, wallet.address), async () => {
      const p = wallet.provider as ethers.JsonRpcProvider;
      const codes = await Promise.all(canonical.map((a) => p.getCode(a)));
      const present = codes.filter((c) => c !== '0x').length;
      if (present === TEST_NFTS.length) return collections(canonical);
      if (present > 0) throw new Error(`deployTestNfts: only ${present} of ${TEST_NFTS.length} test collections exist at their addresses`);
      const nonce = await p.getTransactionCount(wallet.address, 'pending');
      const sent = [];
      for (const [i, n] of TEST_NFTS.entries()) {
        const { abi, bytecode } = loadArtifact(n.artifact);
        const tx = await new ethers.ContractFactory(abi, bytecode, wallet).getDeployTransaction(n.name, n.symbol);
        sent.push(await wallet.sendTransaction({ ...tx, nonce: nonce + i }));
      }
      const receipts = await Promise.all(sent.map((tx) => tx.wait()));
      return collections(
        receipts.map((r, i) => {
          if (!r?.contractAddress) throw new Error(`deployTestNfts: ${TEST_NFTS[i].symbol} deployment has no contract address`);
          return r.contractAddress;
        }),
      );
    }),
  );
}

export interface NftMintRequest {
  to: string;
  collection: { address: string; standard: string };
  /** ERC-1155: the id to mint (required). ERC-721: ignored, the collection takes its next id. */
  tokenId?: bigint;
  /** ERC-1155: how many; ERC-721: always 1. */
  amount: bigint;
}

/**
 * Mints from a test collection (sent by the given funded dev account) and waits for the block: the
 * ERC-721 token id is read from the receipt's Transfer log, so concurrent mints each get their own.
 */
export async function mintTestNft(rpcUrl: string, senderPrivateKey: string, req: NftMintRequest): Promise<{ txHash: string; tokenId: bigint; amount: bigint }> {
  const to = ethers.getAddress(req.to);
  return withWallet(rpcUrl, senderPrivateKey, async (wallet) => {
    const collection = new ethers.Contract(ethers.getAddress(req.collection.address), testNftMinter, wallet);
    const erc721 = req.collection.standard === 'ERC721';
    if (!erc721 && req.tokenId === undefined) throw new Error('mintTestNft: an ERC-1155 mint needs a token id');
    const tx: ethers.ContractTransactionResponse = await serialized(senderKey(rpcUrl, wallet.address), () =>
      retryNonceClash(() => (erc721 ? collection['mint(address)'](to) : collection['mint(address,uint256,uint256)'](to, req.tokenId, req.amount))),
    );
    const receipt = await tx.wait();
    if (!receipt || receipt.status !== 1) throw new Error(`mintTestNft: ${tx.hash} failed`);
    if (!erc721) return { txHash: tx.hash, tokenId: req.tokenId!, amount: req.amount };
    const minted = receipt.logs.find((l) => l.topics[0] === ethers.id('Transfer(address,address,uint256)') && l.topics.length === 4);
    return { txHash: tx.hash, tokenId: BigInt(minted!.topics[3]), amount: 1n };
  });
}
