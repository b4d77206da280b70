import {
  SolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__INSUFFICIENT_FUNDS_FOR_RENT,
} from '@solana/kit';
import { solanaErrorText } from '../../../src/platform/chain-port/solana-error-text';

/** Builds the error as @solana/kit would under the given NODE_ENV (it words its message when the error is made). */
function underNodeEnv<T>(nodeEnv: string, make: () => T): T {
  const before = process.env.NODE_ENV;
  process.env.NODE_ENV = nodeEnv;
  try {
    return make();
  } finally {
    process.env.NODE_ENV = before;
  }
}

describe('a Solana error in words', () => {
  const rent = () => new SolanaError(SOLANA_ERROR__TRANSACTION_ERROR__INSUFFICIENT_FUNDS_FOR_RENT, { accountIndex: 2 });

  it('is named from its code and context under NODE_ENV=production, where @solana/kit says only "Solana error #<code>"', () => {
    const error = underNodeEnv('production', rent);
    expect(error.message).toMatch(/^Solana error #7050031; Decode this error/);
    expect(solanaErrorText(error)).toBe('transaction error: insufficient funds for rent (accountIndex 2)');
  });

  it('keeps the node message a JSON-RPC error carries', () => {
    const error = underNodeEnv('production', () => new SolanaError(SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE, { message: 'Transaction simulation failed: blockhash not found' } as never));
    expect(solanaErrorText(error)).toBe('json rpc: server error send transaction preflight failure: Transaction simulation failed: blockhash not found');
  });

  it("is @solana/kit's own message elsewhere, and any other error's message", () => {
    expect(solanaErrorText(underNodeEnv('test', rent))).toBe('Transaction results in an account (2) with insufficient funds for rent');
    expect(solanaErrorText(new Error('socket hang up'))).toBe('socket hang up');
  });
});
