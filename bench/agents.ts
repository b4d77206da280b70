import { ethers } from 'ethers';
import { evaluatePolicy, PolicyInput, PolicyRules } from '../src/modules/agents/policy-engine';
import { median } from './support';

/**
 * `npm run bench -- agents [evaluations] [runs]`: the agent payment policy engine in process, no I/O.
 * A policy of realistic size (1,000 allowed recipients, 100 denied, 20 asset limits, every USD rule)
 * evaluates a stream of payments that cycle through allowed, held and denied outcomes.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const evaluations = Number(args[0] ?? 200_000);
  const runs = Number(args[1] ?? 3);
  const id = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
  const address = (n: number) => ethers.getAddress(`0x${n.toString(16).padStart(40, '0')}`);
  const rules: PolicyRules = {
    allowedBlockchainIds: [id(1), id(2)],
    allowedAssetIds: Array.from({ length: 20 }, (_, i) => id(100 + i)),
    allowAnyRecipient: false,
    allowedRecipients: Array.from({ length: 1_000 }, (_, i) => address(10_000 + i)),
    deniedRecipients: Array.from({ length: 100 }, (_, i) => address(20_000 + i)),
    assetLimits: Array.from({ length: 20 }, (_, i) => ({ assetId: id(100 + i), maxPerPayment: '1000', maxPerWindow: '10000', approvalAbove: '500' })),
    maxPerPaymentUsd: '1000',
    maxPerWindowUsd: '10000',
    approvalAboveUsd: '500',
    windowSeconds: 86_400,
  };
  const inputs: PolicyInput[] = Array.from({ length: 1_000 }, (_, i) => ({
    policy: { id: id(9), version: 1, rules },
    agentActive: true,
    payment: { blockchainId: id(1), assetId: id(100 + (i % 20)), decimals: 6, symbol: 'USDC', recipient: address(10_000 + ((i * 7) % 1_100)), rawAmount: BigInt(1 + (i % 700)) * 1_000_000n, amountUsd: String(1 + (i % 700)) },
    window: { assetRaw: BigInt(i % 50) * 100_000_000n, usd: String((i % 50) * 100), withoutUsd: 0 },
    screening: { sanctioned: false, matches: [] },
    sourceHeldByAml: false,
  }));
  const decisions: Record<string, number> = {};
  for (const input of inputs) {
    const d = evaluatePolicy(input).decision;
    decisions[d] = (decisions[d] ?? 0) + 1;
  }
  const rates: number[] = [];
  for (let r = 0; r <= runs; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < evaluations; i++) evaluatePolicy(inputs[i % inputs.length]);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (r > 0) rates.push(evaluations / seconds); // the first run warms up
  }
  return { benchmark: 'agents', evaluations, runs, decisionsPerThousand: decisions, evaluationsPerSecond: Math.round(median(rates)), runsPerSecond: rates.map(Math.round) };
}
