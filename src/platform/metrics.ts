import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics, one registry per process, served at /metrics on each host. */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'host' | 'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'host' | 'method' | 'route'>;
  readonly webhookAttempts: Counter<'outcome'>;
  readonly walletDebts: Counter<'event'>;
  readonly settlementDifferences: Gauge<'chain'>;
  readonly settlementReconciliations: Counter<'chain' | 'outcome'>;
  readonly tradingDepositReorgs: Counter<'chain'>;
  readonly sweepAttempts: Counter<'purpose' | 'outcome'>;

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: 'keel_http_requests_total',
      help: 'HTTP requests by host, method, route and status',
      labelNames: ['host', 'method', 'route', 'status'],
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'keel_http_request_duration_seconds',
      help: 'HTTP request latency',
      labelNames: ['host', 'method', 'route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
    this.webhookAttempts = new Counter({
      name: 'keel_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (success, failure)',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.walletDebts = new Counter({
      name: 'keel_wallet_debt_events_total',
      help: 'Wallet debts recorded (a reorg took back a deposit already spent or locked) and repaid, by event (recorded, repaid)',
      labelNames: ['event'],
      registers: [this.registry],
    });
    this.settlementDifferences = new Gauge({
      name: 'keel_settlement_reconcile_differences',
      help: 'Wallet and asset pairs whose on-chain balance (wallet address plus settlement contract) differs from the ledger, at the last reconciliation, by chain',
      labelNames: ['chain'],
      registers: [this.registry],
    });
    this.settlementReconciliations = new Counter({
      name: 'keel_settlement_reconciliations_total',
      help: 'Reconciliations of on-chain balances against the ledger, by chain and outcome (clean, differences, error)',
      labelNames: ['chain', 'outcome'],
      registers: [this.registry],
    });
    this.tradingDepositReorgs = new Counter({
      name: 'keel_trading_deposit_reorgs_total',
      help: 'Confirmed deposits to trading that a reorg deeper than the confirmation count took off the chain, by chain',
      labelNames: ['chain'],
      registers: [this.registry],
    });
    this.sweepAttempts = new Counter({
      name: 'keel_sweep_attempts_total',
      help: 'Attempts at sweeping a deposit address, by purpose (auto_sweep, checkout_settlement) and outcome (arranged, nothing, held, failed: due again later)',
      labelNames: ['purpose', 'outcome'],
      registers: [this.registry],
    });
  }
}
