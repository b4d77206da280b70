import * as kit from '@solana/kit';
import { isSolanaError } from '@solana/kit';

/** Each @solana/kit error code's name (SOLANA_ERROR__TRANSACTION_ERROR__INSUFFICIENT_FUNDS_FOR_RENT), by code. */
const CODE_NAMES = new Map<number, string>(
  Object.entries(kit as Record<string, unknown>)
    .filter((entry): entry is [string, number] => entry[0].startsWith('SOLANA_ERROR__') && typeof entry[1] === 'number')
    .map(([name, code]): [number, string] => [code, name.slice('SOLANA_ERROR__'.length)]),
);

/**
 * What a Solana error says, in words whatever NODE_ENV is. Under NODE_ENV=production @solana/kit
 * drops its messages for "Solana error #<code>; Decode this error by running `npx @solana/errors
 * decode …`", which tells an operator reading a log, or a user reading a refusal, nothing: the
 * error is then named from its code and context instead ("transaction error: insufficient funds for
 * rent (accountIndex 2)"), and a node's own message in the context is kept.
 */
export function solanaErrorText(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (!isSolanaError(error) || !message.startsWith('Solana error #')) return message;
  const { __code: code, ...context } = error.context as { __code: number } & Record<string, unknown>;
  const name = CODE_NAMES.get(code);
  const words = name ? name.toLowerCase().replace(/__/g, ': ').replace(/_/g, ' ') : `Solana error ${code}`;
  const nodeMessage = typeof context.message === 'string' ? context.message : undefined;
  const details = Object.entries(context)
    .filter(([key, value]) => key !== 'message' && (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean'))
    .map(([key, value]) => `${key} ${String(value)}`);
  return `${words}${nodeMessage ? `: ${nodeMessage}` : ''}${details.length ? ` (${details.join(', ')})` : ''}`;
}
