// EVM balance reads moved behind the chain port (platform/chain-port/evm-chain.ts, issue 35); kept
// here for the module's callers that stay EVM-only (recovery of unregistered tokens, signing, trading).
export { readBalances, readTokenFacts } from '../../platform/chain-port/evm-chain';
