import type { ethers } from 'ethers';
import type { Keel } from '../../src/app';
import type { ChainNetworks } from '../../src/modules/chains/chain-networks';
import { EvmChain } from '../../src/platform/chain-port/evm-chain';
import type { Logger } from '../../src/platform/logger';
import { TransactionSender, type TransactionSenderOptions } from '../../src/modules/withdrawals/transaction-sender';

/** Stand-ins for a node's answers, each given the real provider to pass the call on if it chooses. */
export interface NodeAnswers {
  broadcastTransaction?: (provider: ethers.JsonRpcProvider, rawTx: string) => Promise<unknown>;
  estimateGas?: (provider: ethers.JsonRpcProvider, tx: ethers.TransactionRequest) => Promise<bigint>;
  getBlock?: (provider: ethers.JsonRpcProvider, tag: ethers.BlockTag, prefetchTxs?: boolean) => Promise<unknown>;
  getTransactionReceipt?: (provider: ethers.JsonRpcProvider, hash: string) => Promise<ethers.TransactionReceipt | null>;
  getTransaction?: (provider: ethers.JsonRpcProvider, hash: string) => Promise<ethers.TransactionResponse | null>;
}

/**
 * A transaction sender as another worker would run it, for tests that tick it themselves (start
 * Keel with a long TRANSFER_POLL_INTERVAL_MS so its own stays out of the way). `answers` stand in
 * for the nodes' answers, on every chain or (keyed by blockchain id) on some; `options` (a fee bump
 * at once, say) override the defaults; `logger` takes its log lines.
 */
export function manualSender(keel: Keel, answers: NodeAnswers | Record<string, NodeAnswers> = {}, options: Partial<TransactionSenderOptions> = {}, logger: Logger = keel.platform.logger): TransactionSender {
  const { services, platform } = keel;
  const answersOf = (blockchainId: string): NodeAnswers => (blockchainId in answers ? (answers as Record<string, NodeAnswers>)[blockchainId] : (answers as NodeAnswers));
  const get = (id: string) => {
    const n = services.networks.get(id);
    if (!n) return undefined;
    const standIns = answersOf(id);
    const provider = new Proxy(n.provider, {
      get: (target, prop) => {
        const answer = standIns[prop as keyof NodeAnswers];
        if (answer) return (...args: unknown[]) => answer(target, ...(args as [never]));
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value; // private fields need the real provider as `this`
      },
    });
    return { ...n, provider, port: new EvmChain({ provider, chainId: n.spec.chainId, confirmations: n.spec.confirmations }) };
  };
  // The real networks, each EVM chain's node seen through the stand-ins.
  const networks = new Proxy(services.networks, {
    get: (target, prop) => {
      if (prop === 'get') return get;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ChainNetworks;
  const sender = new TransactionSender(platform.db, platform.outbox, networks, services.chains, services.sendingWallets, { pollIntervalMs: 50, bumpAfterMs: 600_000, bumpPercent: 25, ...options }, logger);
  sender.onOutcome(services.custodyLedgerSync);
  return sender;
}
