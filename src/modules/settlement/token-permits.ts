import { ethers } from 'ethers';

const erc2612 = new ethers.Interface([
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function nonces(address) view returns (uint256)',
  'function name() view returns (string)',
  'function version() view returns (string)',
  'function eip712Domain() view returns (bytes1, string, string, uint256, address, bytes32, uint256[])',
  'function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)',
]);

/** EIP-2612's Permit(address owner, address spender, uint256 value, uint256 nonce, uint256 deadline). */
const PERMIT_TYPES = { Permit: 'address owner,address spender,uint256 value,uint256 nonce,uint256 deadline'.split(',').map((f) => ({ type: f.split(' ')[0], name: f.split(' ')[1] })) };

/** A permit's deadline: none in practice (the signature names one spender and one amount, and the transaction carrying it is recorded before broadcast). */
export const PERMIT_DEADLINE = ethers.MaxUint256;

/** A token's EIP-2612 permit as a deposit signs it: the EIP-712 domain and the owner's next nonce. */
export interface PermitTerms {
  domain: ethers.TypedDataDomain;
  nonce: bigint;
}

/**
 * The token's EIP-2612 permit terms for `owner`, or null when it has none: it must answer `nonces`
 * and `DOMAIN_SEPARATOR`, and the separator must be the one its name and version (EIP-5267
 * `eip712Domain` when it has it, else `version()`, else "1") give on this chain, so that a
 * signature made here is the one the token checks. Anything else (USDT, a token with a
 * non-standard domain) deposits under an approval.
 */
export async function permitTerms(provider: ethers.Provider, token: string, chainId: number, owner: string): Promise<PermitTerms | null> {
  const call = async (fn: string, args: unknown[] = []): Promise<ethers.Result | null> => {
    try {
      return erc2612.decodeFunctionResult(fn, await provider.call({ to: token, data: erc2612.encodeFunctionData(fn, args) }));
    } catch {
      return null;
    }
  };
  const [separator, nonce] = await Promise.all([call('DOMAIN_SEPARATOR'), call('nonces', [owner])]);
  if (!separator || !nonce) return null;
  const declared = await call('eip712Domain');
  const name = declared ? (declared[1] as string) : ((await call('name'))?.[0] as string | undefined);
  const version = declared ? (declared[2] as string) : (((await call('version'))?.[0] as string | undefined) ?? '1');
  if (name === undefined) return null;
  const domain = { name, version, chainId, verifyingContract: ethers.getAddress(token) };
  if (ethers.TypedDataEncoder.hashDomain(domain) !== separator[0]) return null;
  return { domain, nonce: nonce[0] as bigint };
}

/** The owner's permit for `spender` to take exactly `value`: (v, r, s) as `depositWithCoin` takes them. */
export async function signPermit(signer: ethers.Signer, terms: PermitTerms, spender: string, value: bigint, deadline: bigint = PERMIT_DEADLINE): Promise<{ deadline: bigint; v: number; r: string; s: string }> {
  const owner = await signer.getAddress();
  const sig = ethers.Signature.from(await signer.signTypedData(terms.domain, PERMIT_TYPES, { owner, spender, value, nonce: terms.nonce, deadline }));
  return { deadline, v: sig.v, r: sig.r, s: sig.s };
}

/**
 * The owner's permit for `spender` to take exactly `value`, or null when the token has no EIP-2612
 * permit (permitTerms) or would not take this one: the signature is tried on the token first with
 * eth_call (anyone may submit a permit), so a token whose `permit` differs (DAI's has other
 * arguments) or refuses it deposits under an approval instead of failing on chain.
 */
export async function checkedPermit(provider: ethers.Provider, signer: () => Promise<ethers.Signer>, token: string, chainId: number, owner: string, spender: string, value: bigint): Promise<{ deadline: bigint; v: number; r: string; s: string } | null> {
  const terms = await permitTerms(provider, token, chainId, owner);
  if (!terms) return null;
  const signed = await signPermit(await signer(), terms, spender, value);
  try {
    await provider.call({ to: token, data: erc2612.encodeFunctionData('permit', [owner, spender, value, signed.deadline, signed.v, signed.r, signed.s]) });
    return signed;
  } catch {
    return null;
  }
}
