import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { Outbox } from '../../platform/events/outbox';
import { exactInDecimals, formatScaled, normalizeDecimal, parseUnits } from '../../platform/decimal';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import { fetchPage } from '../../platform/db/fetch-page';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { assetsById, type ChainService, type AssetView } from '../chains';
import type { PreparedTransfer, SettlementContractGuard, TransferService } from '../withdrawals';
import { checksumOrNull } from '../wallets';
import { unreleasedFlags } from '../deposits';
import type { AgentCaller, AgentService } from './agent.service';
import type { AgentWalletService } from './agent-wallet.service';
import type { AgentPolicyService } from './agent-policy.service';
import type { RecipientScreen, UsdValuer } from './agent-ports';
import { evaluatePolicy, PolicyEvaluation, PolicyInput } from './policy-engine';
import type { AgentPaymentStatus } from './agent.domain';


/** Payments let go: allowed at their request or approved by an administrator, and sent or on their way. */
const LET_GO_STATUSES: AgentPaymentStatus[] = ['APPROVED', 'SUBMITTED', 'EXECUTED'];

/**
 * Statuses that count against the rolling-window limits when a payment is requested: everything not
 * refused or failed, the held payments too (each may yet be approved). When a held payment is
 * approved only LET_GO_STATUSES count: the others held are each checked again at their own approval.
 */
export const COUNTED_STATUSES: AgentPaymentStatus[] = ['PENDING', ...LET_GO_STATUSES];

export interface RequestAgentPayment {
  agentWalletId: string;
  assetId: string;
  recipient: string;
  /** Whole units, e.g. "12.5". */
  amount: string;
  /** The same key again returns the payment it first created (409 if the request differs). */
  idempotencyKey?: string;
}

export interface AgentPaymentFilter extends PageWindow {
  agentWalletId?: string;
  status?: AgentPaymentStatus;
  /** By creation time; DESC (newest first) unless ASC. */
  sort?: 'ASC' | 'DESC';
}

export interface AgentPaymentView {
  id: string;
  organizationId: string;
  agentId: string;
  agentWalletId: string;
  kind: string;
  status: AgentPaymentStatus;
  assetId: string;
  blockchainId: string;
  recipient: string;
  amount: string;
  amountUsd: string | null;
  policyId: string | null;
  policyEvaluation: Record<string, unknown>;
  denialReason: string | null;
  waasTxHash: string | null;
  failureReason: string | null;
  transferId: string | null;
  idempotencyKey: string | null;
  decidedAt: Date | null;
  createdAt: Date;
  executedAt: Date | null;
  updatedAt: Date;
}

/** The stored row: the view's fields, with the amount in the smallest unit and the hash as stored. */
interface PaymentRow extends Omit<AgentPaymentView, 'amount' | 'waasTxHash' | 'policyEvaluation'> {
  rawAmount: string;
  txHash: string | null;
  transferItemId: string | null;
  policyEvaluation: PolicyEvaluation & Record<string, unknown>;
}

const PAYMENT = 'Agent payment';

/** A stored payment as the policy engine sees it, valued as it was when requested. */
function policyPayment(row: PaymentRow, asset: AssetView): PolicyInput['payment'] {
  const usdPrice = row.policyEvaluation.usdPrice as PolicyInput['payment']['usdPrice'];
  return { blockchainId: row.blockchainId, assetId: row.assetId, decimals: asset.decimals, symbol: asset.symbol, recipient: row.recipient, rawAmount: BigInt(row.rawAmount), amountUsd: row.amountUsd === null ? null : normalizeDecimal(row.amountUsd), usdPrice };
}

/** The event each status is announced with. */
const EVENT_OF: Record<AgentPaymentStatus, string> = {
  PENDING: 'agent_payment.pending_approval',
  POLICY_DENIED: 'agent_payment.policy_denied',
  APPROVED: 'agent_payment.approved',
  SUBMITTED: 'agent_payment.submitted',
  EXECUTED: 'agent_payment.executed',
  FAILED: 'agent_payment.failed',
};

/**
 * Agent payments. An agent asks with its own key; the policy engine decides before anything is
 * signed: POLICY_DENIED (with the reason), PENDING (above an approval threshold: an administrator
 * approves or rejects) or APPROVED, when the payment becomes a transfer for the transaction sender
 * in the same transaction. The sender reports SUBMITTED (signed, with its hash), EXECUTED or FAILED
 * (AgentPaymentOutcomes).
 *
 * PENDING → APPROVED | POLICY_DENIED (rejected, or refused by the policy when approved); APPROVED → SUBMITTED | FAILED; SUBMITTED → EXECUTED | FAILED.
 */
export class AgentPaymentService {
  constructor(
    private readonly db: Knex,
    private readonly outbox: Outbox,
    private readonly agents: AgentService,
    private readonly wallets: AgentWalletService,
    private readonly policies: AgentPolicyService,
    private readonly chains: ChainService,
    private readonly transfers: TransferService,
    private readonly settlementContracts: SettlementContractGuard,
    private readonly screen: RecipientScreen,
    private readonly valuer: UsdValuer,
    private readonly uow: UnitOfWork,
  ) {}

  /** A payment requested by the agent itself (its key): evaluated, stored with its evaluation, and sent when allowed. */
  async request(caller: AgentCaller, agentId: string, input: RequestAgentPayment): Promise<AgentPaymentView> {
    if (!caller.agentId) throw KeelError.forbidden("Only the agent's own key may request its payments");
    const agent = await this.agents.row(this.db, caller, agentId);
    if (input.idempotencyKey) {
      const earlier = await this.byIdempotencyKey(this.db, agent.id, input.idempotencyKey);
      if (earlier) return this.replay(earlier, input);
    }
    const wallet = await this.wallets.row(this.db, caller, agent.id, input.agentWalletId);
    if (!wallet.isActive) throw KeelError.invalidField('agentWalletId', 'the agent wallet is deactivated');
    const asset = await this.asset(input.assetId);
    if (asset.blockchainId !== wallet.blockchainId) throw new KeelError('INVALID_NETWORK', "The asset is not on the agent wallet's blockchain", { fields: [{ field: 'assetId', error: 'INVALID_FIELD' }] });
    const recipient = checksumOrNull(input.recipient);
    if (!recipient) throw new KeelError('INVALID_ADDRESS', 'recipient is not a valid EVM address (format or checksum)', { fields: [{ field: 'recipient', error: 'INVALID_FIELD' }] });
    // Refused outright, not recorded FAILED as the withdrawal checks' refusals are: the agent's request itself is wrong.
    await this.settlementContracts.check(asset.blockchainId, recipient, 'recipient');
    const rawAmount = parseUnits(input.amount, asset.decimals);
    if (rawAmount === null || rawAmount <= 0n) throw KeelError.invalidField('amount', exactInDecimals(asset.decimals, { of: asset.symbol }));
    const amount = formatScaled(rawAmount, asset.decimals);
    const { amountUsd, price } = await this.valuer.usdValue(asset.blockchainId, asset.id, amount);
    const screening = this.screen.screen(recipient);
    const usdPrice = { priceUsd: price.priceUsd, source: price.source, asOf: price.asOf, unavailableReason: price.unavailableReason };
    const payment = { blockchainId: asset.blockchainId, assetId: asset.id, decimals: asset.decimals, symbol: asset.symbol, recipient, rawAmount, amountUsd, usdPrice };
    const prepare = () => this.transfers.prepare(caller.organizationId, { addressId: wallet.addressId }, [{ assetId: asset.id, recipient, amount }]);
    // The policy first, without the lock: only a payment it allows is worth the withdrawal checks,
    // which read the chain and so run before the transaction; their verdict matters only if the
    // policy, evaluated again under the lock, still allows the payment.
    const preview = await this.evaluate(this.db, agent.status, agent.id, wallet.addressId, payment, screening);
    const sending =
      preview.evaluation.decision === 'ALLOW'
        ? await prepare().then(
            (prepared) => ({ prepared, error: null as unknown }),
            (error: unknown) => ({ prepared: null, error }),
          )
        : null;

    const id = await this.uow.run('agent-payment.request', async (trx) => {
      // The agent's row lock queues its payments: each sees what the one before it spent.
      const locked = await this.agents.row(trx, caller, agent.id, true);
      if (input.idempotencyKey) {
        // A request with the same key that committed while this one waited for the lock.
        const earlier = await this.byIdempotencyKey(trx, agent.id, input.idempotencyKey);
        if (earlier) return (await this.replay(earlier, input, trx)).id;
      }
      const { policy, evaluation } = await this.evaluate(trx, locked.status, agent.id, wallet.addressId, payment, screening);
      const status: AgentPaymentStatus = evaluation.decision === 'DENY' ? 'POLICY_DENIED' : evaluation.decision === 'REQUIRE_APPROVAL' ? 'PENDING' : 'APPROVED';
      const [row] = await trx('agent_payments')
        .insert({
          organizationId: caller.organizationId,
          agentId: agent.id,
          agentWalletId: wallet.id,
          status,
          assetId: asset.id,
          blockchainId: asset.blockchainId,
          recipient,
          rawAmount: rawAmount.toString(),
          amountUsd,
          policyId: policy?.id ?? null,
          policyEvaluation: JSON.stringify({ ...evaluation, evaluatedAt: new Date().toISOString(), screening, usdPrice }),
          denialReason: evaluation.denialReason,
          idempotencyKey: input.idempotencyKey ?? null,
        })
        .returning('*');
      if (status === 'APPROVED') {
        // Allowed now though not before the lock (the window moved meanwhile): checked here.
        const checked = sending ?? (await prepare().then((prepared) => ({ prepared, error: null as unknown }), (error: unknown) => ({ prepared: null, error })));
        // The transfer is recorded in a savepoint: the custody ledger's reservation may refuse it too.
        const refusal = checked.prepared ? await trx.transaction((sp) => this.send(sp, row, checked.prepared!)).then(() => null, (e: unknown) => e) : checked.error;
        // Refused by the withdrawal checks (the chain balance, the master wallet's security, the
        // ledger's spendable amount): recorded FAILED with its evaluation, as the docs promise. Trouble
        // reaching a node is not a verdict: the request fails, nothing recorded.
        if (refusal instanceof KeelError && refusal.status < 500) await trx('agent_payments').where({ id: row.id }).update({ status: 'FAILED', failureReason: `Refused by the withdrawal checks: ${refusal.message}`.slice(0, 500), updatedAt: trx.fn.now() });
        else if (refusal) throw refusal;
      }
      await this.announce(trx, row.id, [asset]);
      return row.id as string;
    });
    return (await this.views([await this.row(this.db, caller, agent.id, id)], this.db, [asset]))[0];
  }

  /**
   * The agent's current policy and its verdict on the payment, with what the window already counts
   * and whether the paying address is held by AML (read through `db`). `approving`: an administrator
   * approves a held payment, which meets the approval thresholds and the AML hold, and the window
   * counts only the payments let go (LET_GO_STATUSES).
   */
  private async evaluate(db: Knex | Knex.Transaction, agentStatus: string, agentId: string, addressId: string, payment: PolicyInput['payment'], screening: PolicyInput['screening'], approving = false) {
    const policy = await this.policies.current(db, agentId);
    const window = await this.windowTotals(db, agentId, payment.assetId, policy?.rules.windowSeconds ?? 0, approving ? LET_GO_STATUSES : COUNTED_STATUSES);
    const sourceHeldByAml = !!(await unreleasedFlags(db).where({ addressId }).first('id'));
    const evaluation = evaluatePolicy({ policy: policy ? { id: policy.id, version: policy.version, rules: policy.rules } : null, agentActive: agentStatus === 'ACTIVE', payment, window, screening, sourceHeldByAml, approved: approving });
    return { policy, evaluation };
  }

  /**
   * An administrator releases a payment held above an approval threshold. The agent's policy as it
   * is now decides again, with the recipient screened again and against what the window has let go
   * by now (the approval meets the thresholds): allowed, the payment is sent (APPROVED); refused, it
   * is POLICY_DENIED with the policy's reason. Either way the approval and that evaluation are
   * recorded in policyEvaluation.approval.
   */
  async approve(organizationId: string, decidedBy: string, agentId: string, id: string): Promise<AgentPaymentView> {
    const caller = { organizationId, agentId: null };
    const payment = await this.row(this.db, caller, agentId, id);
    if ((await this.agents.row(this.db, caller, agentId)).status !== 'ACTIVE') throw new KeelError('CONFLICT', 'The agent is suspended: resume it before approving its payments');
    const screening = this.screen.screen(payment.recipient);
    const asset = await this.asset(payment.assetId);
    const wallet = await this.wallets.row(this.db, caller, payment.agentId, payment.agentWalletId);
    const held = policyPayment(payment, asset);
    const prepare = () => this.transfers.prepare(organizationId, { addressId: wallet.addressId }, [{ assetId: asset.id, recipient: payment.recipient, amount: formatScaled(BigInt(payment.rawAmount), asset.decimals) }]);
    // As for a request: the policy first, without the lock, and the withdrawal checks (they read the
    // chain) before the transaction only for a payment it still allows. One that cannot be sent stays PENDING.
    const preview = await this.evaluate(this.db, 'ACTIVE', payment.agentId, wallet.addressId, held, screening, true);
    const prepared = preview.evaluation.decision === 'ALLOW' ? await prepare() : null;
    await this.uow.run('agent-payment.approve', async (trx) => {
      // Under the agent's row lock, which suspending it, changing its policy and its other payments
      // take too: a payment is never approved for an agent suspended meanwhile, and of two approvals
      // at once the second sees what the first let go.
      const agent = await this.agents.row(trx, caller, agentId, true);
      if (agent.status !== 'ACTIVE') throw new KeelError('CONFLICT', 'The agent is suspended: resume it before approving its payments');
      const row = await this.pending(trx, payment.id);
      const { evaluation } = await this.evaluate(trx, agent.status, agent.id, wallet.addressId, held, screening, true);
      const allowed = evaluation.decision === 'ALLOW';
      const approval = { decision: allowed ? 'APPROVED' : 'DENIED', by: decidedBy, at: new Date().toISOString(), screening, evaluation };
      await this.decide(trx, row.id, allowed ? 'APPROVED' : 'POLICY_DENIED', decidedBy, { ...row.policyEvaluation, approval }, evaluation.denialReason);
      // Allowed now though not before the lock (the window or the policy changed meanwhile): checked here.
      if (allowed) await this.send(trx, row, prepared ?? (await prepare()));
      await this.announce(trx, row.id);
    });
    return this.get(caller, agentId, payment.id);
  }

  /** An administrator refuses a held payment: POLICY_DENIED, with the rejection as the reason. */
  async reject(organizationId: string, decidedBy: string, agentId: string, id: string, reason?: string): Promise<AgentPaymentView> {
    const caller = { organizationId, agentId: null };
    const payment = await this.row(this.db, caller, agentId, id);
    await this.uow.run('agent-payment.reject', async (trx) => {
      const row = await this.pending(trx, payment.id);
      const approval = { decision: 'REJECTED', by: decidedBy, at: new Date().toISOString(), reason: reason ?? null };
      await this.decide(trx, row.id, 'POLICY_DENIED', decidedBy, { ...row.policyEvaluation, approval }, `Rejected by an administrator${reason ? `: ${reason}` : ''}`);
      await this.announce(trx, row.id);
    });
    return this.get(caller, agentId, payment.id);
  }

  async list(caller: AgentCaller, agentId: string, filter: AgentPaymentFilter): Promise<PageResult<AgentPaymentView>> {
    const agent = await this.agents.row(this.db, caller, agentId);
    const agentWalletId = Ids.filter('agentWalletId', filter.agentWalletId);
    const q = this.db('agent_payments')
      .where({ organizationId: caller.organizationId, agentId: agent.id })
      .modify((b) => {
        if (agentWalletId) b.where({ agentWalletId });
        if (filter.status) b.where({ status: filter.status });
      });
    const order = filter.sort === 'ASC' ? 'asc' : 'desc';
    const { rows, total } = await fetchPage<PaymentRow>(q, filter, [{ column: 'createdAt', order }, { column: 'id', order }]);
    return toPage(await this.views(rows), total, filter);
  }

  async get(caller: AgentCaller, agentId: string, id: string): Promise<AgentPaymentView> {
    return (await this.views([await this.row(this.db, caller, agentId, id)]))[0];
  }

  /** Moves the payment of a transfer line on, as the transaction sender reports it (AgentPaymentOutcomes). */
  async transferLineMoved(trx: Knex.Transaction, itemId: string, to: 'SUBMITTED' | 'EXECUTED' | 'FAILED', facts: { txHash: string | null; error: string | null }): Promise<void> {
    const from: AgentPaymentStatus[] = to === 'SUBMITTED' ? ['APPROVED'] : ['APPROVED', 'SUBMITTED'];
    const patch: Record<string, unknown> = { status: to, updatedAt: trx.fn.now() };
    if (facts.txHash) patch.txHash = facts.txHash;
    if (to === 'EXECUTED') patch.executedAt = trx.fn.now();
    if (to === 'FAILED') patch.failureReason = facts.error ?? 'the transaction failed';
    const moved: { id: string }[] = await trx('agent_payments').where({ transferItemId: itemId }).whereIn('status', from).update(patch).returning('id');
    for (const m of moved) await this.announce(trx, m.id);
  }

  /** Records the payment's transfer for the transaction sender, in the payment's transaction. */
  private async send(trx: Knex.Transaction, row: PaymentRow, prepared: PreparedTransfer): Promise<void> {
    const { transferId, itemIds } = await this.transfers.enqueuePrepared(trx, prepared, 'agent_payment', `agent payment ${row.id}`);
    await trx('agent_payments').where({ id: row.id }).update({ transferId, transferItemId: itemIds[0], updatedAt: trx.fn.now() });
  }

  private async decide(trx: Knex.Transaction, id: string, status: AgentPaymentStatus, decidedBy: string, evaluation: Record<string, unknown>, denialReason: string | null): Promise<void> {
    await trx('agent_payments').where({ id }).update({ status, decidedBy, decidedAt: trx.fn.now(), policyEvaluation: JSON.stringify(evaluation), denialReason, updatedAt: trx.fn.now() });
  }

  private async pending(trx: Knex.Transaction, id: string): Promise<PaymentRow> {
    const row: PaymentRow = await trx('agent_payments').where({ id }).forUpdate().first();
    if (row.status !== 'PENDING') throw new KeelError('CONFLICT', `The payment is ${row.status}, not waiting for approval`);
    return row;
  }

  /**
   * What counts against the window, of the payments in `statuses`: this asset in its units, and USD
   * over every asset. A payment counts from when it was let go: one an administrator approved from
   * its approval (decided_at, never before its request), any other from its request.
   */
  private async windowTotals(trx: Knex | Knex.Transaction, agentId: string, assetId: string, windowSeconds: number, statuses: AgentPaymentStatus[]) {
    const since = new Date(Date.now() - windowSeconds * 1000);
    const [totals] = await trx('agent_payments')
      .where({ agentId })
      .whereIn('status', statuses)
      .where((q) => q.where('createdAt', '>', since).orWhere('decidedAt', '>', since))
      .select(
        trx.raw('coalesce(sum(raw_amount) filter (where asset_id = ?), 0)::text as asset_raw', [assetId]),
        trx.raw('coalesce(sum(amount_usd), 0)::text as usd'),
        trx.raw('count(*) filter (where amount_usd is null)::int as without_usd'),
      );
    return { assetRaw: BigInt(totals.assetRaw), usd: normalizeDecimal(totals.usd), withoutUsd: Number(totals.withoutUsd) };
  }

  private async asset(assetId: string): Promise<AssetView> {
    const asset = Ids.isUuid(assetId) ? (await this.chains.assetViews([assetId.toLowerCase()])).get(assetId.toLowerCase()) : undefined;
    if (!asset || !asset.isActive) throw KeelError.invalidField('assetId', 'unknown asset');
    return asset;
  }

  private async byIdempotencyKey(db: Knex | Knex.Transaction, agentId: string, key: string): Promise<PaymentRow | undefined> {
    return db('agent_payments').where({ agentId, idempotencyKey: key }).first();
  }

  /** The payment an idempotency key first created, if this request is the same one. */
  private async replay(earlier: PaymentRow, input: RequestAgentPayment, db: Knex | Knex.Transaction = this.db): Promise<AgentPaymentView> {
    const [asset] = await assetsById(db, [earlier.assetId]);
    const same =
      earlier.agentWalletId === input.agentWalletId.toLowerCase() &&
      earlier.assetId === input.assetId.toLowerCase() &&
      earlier.recipient.toLowerCase() === input.recipient.toLowerCase() &&
      parseUnits(input.amount, asset.decimals) === BigInt(earlier.rawAmount);
    if (!same) throw new KeelError('CONFLICT', 'idempotencyKey was already used for a different payment', { fields: [{ field: 'idempotencyKey', error: 'INVALID_FIELD' }] });
    return (await this.views([earlier], db))[0];
  }

  private async row(db: Knex | Knex.Transaction, caller: AgentCaller, agentId: string, id: string): Promise<PaymentRow> {
    const agent = await this.agents.row(db, caller, agentId);
    const row = await db('agent_payments').where({ id: Ids.uuid(PAYMENT, id), agentId: agent.id, organizationId: caller.organizationId }).first();
    if (!row) throw KeelError.notFound(PAYMENT);
    return row;
  }

  /** Publishes the payment's current status as its event, inside the transaction that set it. */
  private async announce(trx: Knex.Transaction, id: string, known: AssetView[] = []): Promise<void> {
    const row: PaymentRow = await trx('agent_payments').where({ id }).first();
    const [payment] = await this.views([row], trx, known);
    await this.outbox.publish(trx, { organizationId: row.organizationId, type: EVENT_OF[row.status], data: { payment } });
  }

  /** Views of rows, read through `db` (the caller's transaction holds the one connection it needs). */
  private async views(rows: PaymentRow[], db: Knex | Knex.Transaction = this.db, known: AssetView[] = []): Promise<AgentPaymentView[]> {
    const decimals = new Map<string, number>(known.map((a) => [a.id, a.decimals]));
    const missing = [...new Set(rows.map((r) => r.assetId))].filter((id) => !decimals.has(id));
    for (const a of await assetsById(db, missing)) decimals.set(a.id, a.decimals);
    return rows.map((r) => ({
      id: r.id,
      organizationId: r.organizationId,
      agentId: r.agentId,
      agentWalletId: r.agentWalletId,
      kind: r.kind,
      status: r.status,
      assetId: r.assetId,
      blockchainId: r.blockchainId,
      recipient: r.recipient,
      amount: formatScaled(BigInt(r.rawAmount), decimals.get(r.assetId)!),
      amountUsd: r.amountUsd === null ? null : normalizeDecimal(r.amountUsd),
      policyId: r.policyId,
      policyEvaluation: r.policyEvaluation,
      denialReason: r.denialReason,
      waasTxHash: r.txHash,
      failureReason: r.failureReason,
      transferId: r.transferId,
      idempotencyKey: r.idempotencyKey,
      decidedAt: r.decidedAt,
      createdAt: r.createdAt,
      executedAt: r.executedAt,
      updatedAt: r.updatedAt,
    }));
  }
}
