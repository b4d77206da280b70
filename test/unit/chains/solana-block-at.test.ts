/**
 * What a Solana node's answer for a slot says of its block (ChainPort.blockAt), on the answering
 * node's own word: behind a load balancer the node asked for the block may be another than the one
 * asked for the chain's height, so "no block" is believed only when the node says it skipped the slot.
 */
import type { SolanaChain } from '../../../src/platform/chain-port/solana-chain';
import { NodeAnswer, solanaChainAnswering } from '../../support/solana-node';

/** A node answering getBlock with `getBlock` (an error or a block), and any height asked a high one (as another node behind a balancer would). */
function chainAnswering(getBlock: NodeAnswer): SolanaChain {
  return solanaChainAnswering((method) => (method === 'getBlock' ? getBlock : { result: 10_000 }));
}

test('a slot the node has not reached (-32004) or no longer keeps (-32001) is unknown, whatever height another node reports', async () => {
  expect(await chainAnswering({ error: { code: -32004, message: 'Block not available for slot 1000' } }).blockAt(1000, 'final')).toBe('unknown');
  expect(await chainAnswering({ error: { code: -32001, message: 'Block 1000 cleaned up, does not exist on node. First available block: 2000' } }).blockAt(1000, 'final')).toBe('unknown');
});

test('a slot the node says was skipped (-32007, -32009) is none; a block is its hash', async () => {
  expect(await chainAnswering({ error: { code: -32007, message: 'Slot 1000 was skipped, or missing due to ledger jump to recent snapshot' } }).blockAt(1000, 'final')).toBe('none');
  expect(await chainAnswering({ error: { code: -32009, message: 'Slot 1000 was skipped, or missing in long-term storage' } }).blockAt(1000, 'final')).toBe('none');
  const block = { blockhash: '4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn', previousBlockhash: '4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn', parentSlot: 999, blockHeight: 900, blockTime: 1 };
  expect(await chainAnswering({ result: block }).blockAt(1000, 'final')).toEqual({ hash: block.blockhash });
});
