import { ethers } from 'ethers';
import { senderKey, serialized, withWallet } from './dev-sender';
import { ContractArtifact, loadArtifact } from './artifacts';

export interface TestToken {
  symbol: string;
  name: string;
  decimals: number;
  address: string;
}

/** Deployed in this order, so their addresses follow from the deployer's nonces 0, 1, 2. */
export const TEST_TOKENS: readonly Omit<TestToken, 'address'>[] = [
  { symbol: 'USDC', name: 'Test USD Coin', decimals: 6 },
  { symbol: 'USDT', name: 'Test Tether USD', decimals: 6 },
  { symbol: 'DAI', name: 'Test Dai Stablecoin', decimals: 18 },
];
/** Minted to the deployer for each token, in whole tokens: one trillion. */
const TEST_TOKEN_SUPPLY = '1000000000000';

/** build/contracts/TestToken.json (see loadArtifact). */
export function loadTestTokenArtifact(): ContractArtifact {
  return loadArtifact('TestToken');
}

/** Where deployTestTokens puts TEST_TOKENS for a deployer that has sent nothing before. */
export function predictTestTokenAddresses(deployer: string, firstNonce = 0): string[] {
  return TEST_TOKENS.map((_, i) => ethers.getCreateAddress({ from: deployer, nonce: firstNonce + i }));
}

/**
 * Deploys TEST_TOKENS (USDC 6, USDT 6, DAI 18 decimals) from the signer and mints one trillion of
 * each to it. On a fresh chain the signer's first transactions are the three deployments, so the
 * addresses are always predictTestTokenAddresses(signer). Idempotent: if the tokens are already at
 * those addresses, they are returned as they are. A signer that has sent other transactions first
 * still gets tokens, at addresses that follow from its current nonce.
 */
export async function deployTestTokens(rpcUrl: string, signerPrivateKey: string): Promise<TestToken[]> {
  const { abi, bytecode } = loadTestTokenArtifact();
  return withWallet(rpcUrl, signerPrivateKey, (wallet) =>
    serialized(senderKey(rpcUrl, wallet.address), async () => {
      const p = wallet.provider as ethers.JsonRpcProvider;
      const canonical = predictTestTokenAddresses(wallet.address);
      const codes = await Promise.all(canonical.map((a) => p.getCode(a)));
      const present = codes.filter((c) => c !== '0x').length;
      if (present === TEST_TOKENS.length) {
        return TEST_TOKENS.map((t, i) => ({ ...t, address: canonical[i] }));
      }
      if (present > 0) throw new Error(`deployTestTokens: only ${present} of ${TEST_TOKENS.length} test tokens exist at their addresses`);

      const factory = new ethers.ContractFactory(abi, bytecode, wallet);
      const nonce = await p.getTransactionCount(wallet.address, 'pending');
      // All deployments first (nonces n..n+2, so the addresses are known up front), then the mints.
      const deployTxs = [];
      for (const [i, t] of TEST_TOKENS.entries()) {
        const tx = await factory.getDeployTransaction(t.name, t.symbol, t.decimals);
        deployTxs.push(await wallet.sendTransaction({ ...tx, nonce: nonce + i }));
      }
      const receipts = await Promise.all(deployTxs.map((tx) => tx.wait()));
      const addresses = receipts.map((r, i) => {
        if (!r?.contractAddress) throw new Error(`deployTestTokens: ${TEST_TOKENS[i].symbol} deployment has no contract address`);
        return r.contractAddress;
      });
      const mintTxs = [];
      for (const [i, t] of TEST_TOKENS.entries()) {
        const token = new ethers.Contract(addresses[i], abi, wallet);
        mintTxs.push(
          await token.mint(wallet.address, ethers.parseUnits(TEST_TOKEN_SUPPLY, t.decimals), { nonce: nonce + TEST_TOKENS.length + i }),
        );
      }
      await Promise.all(mintTxs.map((tx: ethers.ContractTransactionResponse) => tx.wait()));
      return TEST_TOKENS.map((t, i) => ({ ...t, address: addresses[i] }));
    }),
  );
}
