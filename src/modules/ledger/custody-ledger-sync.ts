import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { ChainFee, DepositListener, ChainTransferModel, OutflowListener } from '../deposits';
import { bookedInTransactions, type TransferFunds, type FundsLine, type SendingItem, type TransferOutcomeListener } from '../withdrawals';
import type { ChainService } from '../chains';
import type { Logger } from '../../platform/logger';
import type { LedgerAccount, LedgerService } from './ledger.service';
import type { WalletDebts } from './wallet-debts';

/** One credit per deposit per block it was mined in: a deposit a reorg re-mined elsewhere counts again. */
/** Deposits, transfers out and their gas move the wallet's money at its own address. */
const CUSTODY = 'custody' as const;

const depositReference = (d: ChainTransferModel) => `deposit:${d.blockchainId}:${d.txHash}:${d.logIndex}:${d.blockHash}`;
/** One debit per outflow per block it was mined in, like a deposit's credit. */
const outflowReference = (t: ChainTransferModel) => `outflow:${t.blockchainId}:${t.txHash}:${t.logIndex}:${t.batchIndex}:${t.blockHash}`;
/** What a reorg gives back of an outflow's debit, under the debit's reference. */
const givenBack = (reference: string) => `outflow-reorged:${reference}`;
/** The journal keys that say a reference was applied, and that it was undone. */
const CREDIT_KEYS = (r: string) => [`credit:${r}`, `reversal:${r}`] as const;
const OUTFLOW_KEYS = (r: string) => [`debit:${r}`, `credit:${givenBack(r)}`] as const;
/**
 * The gas of one transaction a wallet sent that is not a transfer line's (whose gas is charged under
 * `gas:<item id>`): one charge per (chain, transaction), whoever books it first, the deposit watcher
 * or Keel's own sender of it (`keel settlement exit`). A reorg gives it back under `reorged:`.
 */
const chainGasReference = (blockchainId: string, txHash: string) => `gas:${blockchainId}:${txHash}`;
const GAS_KEYS = (r: string) => [`debit:${r}`, `credit:reorged:${r}`] as const;
const walletOf = (t: ChainTransferModel) => t.addressId ?? t.masterWalletId;

/** The gas one mined transaction of a wallet paid, in the chain's native coin, charged under `reference`. */
interface GasCharge {
  organizationId: string;
  walletId: string;
  blockchainId: string;
  fee: bigint;
  reference: string;
}

/**
 * What on-chain settlement tells the ledger: which senders only hand a wallet back its own funds
 * (the settlement contract paying out a withdrawal from trading, which credits custody itself:
 * not a deposit).
 */
export interface SettlementView {
  isInternalSource(blockchainId: string, fromAddress: string): Promise<boolean>;
}

/**
 * Keeps the ledger's custody accounts in step with the chain: confirmed deposits are credited (repaying any debt
 * of the wallet in the asset first) and reorged ones taken back, what was already spent or locked
 * becoming a debt; a transfer out is debited when it is requested and refunded if it fails or is rejected;
 * the gas a mined transaction paid, reverted or not, is debited from the sender's native balance
 * (what it does not hold available becoming a debt);
 * what left a wallet's address by a transaction Keel did not book (a spender's transferFrom after an
 * approval, a transaction signed without broadcast), and the gas of every transaction the address
 * sent that is not one of Keel's lines, is debited when the watcher sees it, and given back if a
 * reorg drops it.
 */
export class CustodyLedgerSync implements DepositListener, OutflowListener, TransferFunds, TransferOutcomeListener {
  private settlement?: SettlementView;

  constructor(
    private readonly ledger: LedgerService,
    private readonly chains: ChainService,
    private readonly debts: WalletDebts,
    private readonly logger: Logger,
  ) {}

  /** Set once on-chain settlement is wired (services.ts). */
  settleThrough(settlement: SettlementView): void {
    this.settlement = settlement;
  }

  /**
   * A deposit a reorg re-mined in another block is credited again (its reference names the block),
   * and first repays the debt its reversal left: in all it counts once.
   */
  async confirmed(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void> {
    for (const d of deposits) {
      if (await this.settlement?.isInternalSource(d.blockchainId, d.fromAddress)) continue;
      await this.creditFromChain(trx, { organizationId: d.organizationId, walletId: d.addressId ?? d.masterWalletId, assetId: d.assetId, amount: BigInt(d.rawValue), reference: depositReference(d) });
    }
  }

  async reverted(trx: Knex.Transaction, deposits: ChainTransferModel[]): Promise<void> {
    for (const d of deposits) await this.takeBackFromChain(trx, { organizationId: d.organizationId, walletId: d.addressId ?? d.masterWalletId, assetId: d.assetId, reference: depositReference(d) }, 'reorged deposit was already spent or locked: debt recorded');
  }

  /**
   * Credits to a wallet's custody what a mined transaction brought to its address (a deposit; a
   * payout of the settlement contract), under `reference`; once per mining: credited before and
   * taken back by a reorg the chain has since undone, it is credited again (`#2`, …), repaying any
   * debt of the wallet in the asset and account first, so in all it counts once. A credit already
   * live is not applied twice. To custody unless told: a deposit to trading is credited to the
   * trading account, and a payout from trading that reverted on chain is given back to it (again if
   * a reorg took it back and it reverted once more).
   */
  async creditFromChain(trx: Knex.Transaction, credit: { organizationId: string; walletId: string; assetId: string; amount: bigint; reference: string; account?: LedgerAccount }): Promise<void> {
    let live = { ...credit, account: credit.account ?? CUSTODY };
    let { applied } = await this.ledger.credit(trx, live);
    if (!applied) {
      // Credited before: live (nothing to do), or taken back by a reorg the chain has since undone (credited again).
      const reference = (await this.miningReference(trx, credit.reference, 'next', CREDIT_KEYS))!;
      if (reference !== live.reference) ({ applied } = await this.ledger.credit(trx, (live = { ...live, reference })));
    }
    // A debt is repaid from credits to the account that owes it.
    if (applied) await this.debts.repayFrom(trx, live);
  }

  /**
   * Takes back the live credit creditFromChain made under `of.reference` (a reorg took its
   * transaction off the chain), if there is one, from the account it went to: what the wallet
   * already spent or locked of it becomes a debt (logged with `shortfallMessage`).
   */
  async takeBackFromChain(trx: Knex.Transaction, of: { organizationId: string; walletId: string; assetId: string; reference: string }, shortfallMessage: string): Promise<void> {
    const reference = await this.miningReference(trx, of.reference, 'live', CREDIT_KEYS);
    if (!reference) return;
    const { shortfall, account } = await this.ledger.reverseCredit(trx, { reference });
    if (shortfall > 0n) {
      // The account the credit went to owes it (reconciliation subtracts it there).
      await this.debts.record(trx, { organizationId: of.organizationId, walletId: of.walletId, assetId: of.assetId, account, amount: shortfall, reference });
      this.logger.warn({ walletId: of.walletId, assetId: of.assetId, account, shortfall: shortfall.toString() }, shortfallMessage);
    }
  }

  /**
   * What left a watched address by a transaction Keel did not book is debited from the wallet's
   * custody: each outflow less what Keel's own lines in that transaction booked of the asset (a
   * withdrawal, sweep, gas top-up, swap, deposit to trading or broadcast signing request was taken
   * from custody when it was requested). Taken from what is available; the rest becomes a debt.
   */
  async outflowsConfirmed(trx: Knex.Transaction, outflows: ChainTransferModel[]): Promise<void> {
    for (const { outflow, amount } of await this.unbooked(trx, outflows)) {
      const walletId = walletOf(outflow);
      const reference = (await this.miningReference(trx, outflowReference(outflow), 'next', OUTFLOW_KEYS))!;
      const { applied, shortfall } = await this.ledger.debitUpTo(trx, { organizationId: outflow.organizationId, walletId, assetId: outflow.assetId, amount, reference, account: CUSTODY });
      if (!applied || shortfall === 0n) continue;
      await this.debts.record(trx, { organizationId: outflow.organizationId, walletId, assetId: outflow.assetId, account: CUSTODY, amount: shortfall, reference });
      this.logger.warn({ walletId, assetId: outflow.assetId, txHash: outflow.txHash, shortfall: shortfall.toString() }, 'money left the address by a transaction Keel did not send, beyond what the custody ledger held available: debt recorded');
    }
  }

  /** A reorg dropped outflows: what each debited, and the debt it left, is credited back (creditFromChain repays the debt first). */
  async outflowsReverted(trx: Knex.Transaction, outflows: ChainTransferModel[]): Promise<void> {
    for (const { outflow, amount } of await this.unbooked(trx, outflows)) {
      const reference = await this.miningReference(trx, outflowReference(outflow), 'live', OUTFLOW_KEYS);
      if (reference) await this.creditFromChain(trx, { organizationId: outflow.organizationId, walletId: walletOf(outflow), assetId: outflow.assetId, amount, reference: givenBack(reference) });
    }
  }

  /**
   * The gas each transaction a watched address sent paid, reverted or not, when Keel's lines did not
   * send it (theirs is charged when the line is final: executed, failed): someone else with the key,
   * a transaction signed through Keel and broadcast by its caller, an imported address's own.
   * Debited through chargeGasTo like any gas, once per (chain, transaction) and per mining, like an
   * outflow: a transaction a reorg took back and a fork mined again is charged again, once.
   */
  async feesConfirmed(trx: Knex.Transaction, fees: ChainFee[]): Promise<void> {
    for (const f of await this.notSentByLines(trx, fees)) {
      const reference = (await this.miningReference(trx, chainGasReference(f.blockchainId, f.txHash), 'next', GAS_KEYS))!;
      await this.chargeGasTo(trx, { organizationId: f.organizationId, walletId: f.addressId ?? f.masterWalletId, blockchainId: f.blockchainId, fee: BigInt(f.fee), reference });
    }
  }

  /** A reorg (or a chain reset) dropped the transactions: the gas feesConfirmed charged for each is given back. */
  async feesReverted(trx: Knex.Transaction, fees: ChainFee[]): Promise<void> {
    for (const f of await this.notSentByLines(trx, fees)) {
      const reference = await this.miningReference(trx, chainGasReference(f.blockchainId, f.txHash), 'live', GAS_KEYS);
      if (reference) await this.refundGas(trx, reference);
    }
  }

  /** The fees of transactions none of Keel's transfer lines sent (a line's hash is stored before it is broadcast, a fee bump's and a cancellation's too). */
  private async notSentByLines(trx: Knex.Transaction, fees: ChainFee[]): Promise<ChainFee[]> {
    const sent = new Set((await bookedInTransactions(trx, fees.map((f) => f.txHash))).map((l) => l.txHash));
    return fees.filter((f) => !sent.has(f.txHash));
  }

  /**
   * Each outflow's part that Keel's lines did not book, per (transaction, asset): a line books its
   * asset's amount (a signing request's arbitrary call only its native value, while the call may
   * pull tokens), and a deposit to trading the coin riding with a token. The sending wallet's
   * outflows use up the booking first, then in chain order; outflows fully booked are left out.
   */
  private async unbooked(trx: Knex.Transaction, outflows: ChainTransferModel[]): Promise<{ outflow: ChainTransferModel; amount: bigint }[]> {
    const booked = new Map<string, { amount: bigint; senders: Set<string> }>();
    const book = (txHash: string, assetId: string, walletId: string, amount: bigint) => {
      const key = `${txHash}|${assetId}`;
      const b = booked.get(key) ?? booked.set(key, { amount: 0n, senders: new Set() }).get(key)!;
      b.amount += amount;
      b.senders.add(walletId);
    };
    const lines = await bookedInTransactions(trx, [...new Set(outflows.map((t) => t.txHash))]);
    const chainOf = new Map(outflows.map((t) => [t.txHash, t.blockchainId]));
    // The native coin of each chain where a line carries a coin (a deposit to trading's), read once; most scans have none to read.
    const natives = new Map<string, string | undefined>();
    for (const blockchainId of new Set(lines.filter((l) => l.coinValue > 0n).map((l) => chainOf.get(l.txHash)!))) natives.set(blockchainId, (await this.chains.assetsOf(blockchainId, trx)).find((a) => a.isNative)?.id);
    const nativeIds = new Set(natives.values());
    for (const l of lines) {
      book(l.txHash, l.assetId, l.walletId, l.rawAmount);
      if (l.coinValue > 0n && !nativeIds.has(l.assetId)) {
        const native = natives.get(chainOf.get(l.txHash)!);
        if (native) book(l.txHash, native, l.walletId, l.coinValue);
      }
    }
    const sendsFirst = (t: ChainTransferModel) => (booked.get(`${t.txHash}|${t.assetId}`)?.senders.has(walletOf(t)) ? 0 : 1);
    const ordered = [...outflows].sort((a, b) => sendsFirst(a) - sendsFirst(b) || Number(a.blockNumber) - Number(b.blockNumber) || a.logIndex - b.logIndex || a.batchIndex - b.batchIndex);
    const result: { outflow: ChainTransferModel; amount: bigint }[] = [];
    for (const outflow of ordered) {
      const amount = BigInt(outflow.rawValue);
      const b = booked.get(`${outflow.txHash}|${outflow.assetId}`);
      const covered = b ? (b.amount < amount ? b.amount : amount) : 0n;
      if (b) b.amount -= covered;
      if (amount > covered) result.push({ outflow, amount: amount - covered });
    }
    return result;
  }

  /**
   * A reference for one mining of what the chain did (a deposit's or an outflow's names its block):
   * `base`, then `#2`, `#3`… each time a reorg brings it back after it was undone (a chain that
   * returns to a fork it left), so it is applied again. `keys` names the journal entries that say a
   * reference was applied and undone. 'next': the first not undone (one applied and still live is
   * not applied twice); 'live': the one applied and not undone, if any.
   */
  private async miningReference(trx: Knex.Transaction, base: string, want: 'next' | 'live', keys: (reference: string) => readonly [applied: string, undone: string]): Promise<string | undefined> {
    for (let n = 1; ; n++) {
      const reference = n === 1 ? base : `${base}#${n}`;
      const [applied, undone] = keys(reference);
      const entries: { idempotencyKey: string }[] = await trx('ledger_entries').whereIn('idempotencyKey', [applied, undone]).select('idempotencyKey');
      if (!entries.some((e) => e.idempotencyKey === applied)) return want === 'next' ? reference : undefined;
      if (!entries.some((e) => e.idempotencyKey === undone)) return reference;
    }
  }

  /** What the wallet's custody account lets it spend (trades never touch it: proceeds reach it only through a withdrawal from trading). */
  async spendable(trx: Knex.Transaction, walletId: string, assetId: string): Promise<bigint> {
    return this.ledger.spendable(trx, walletId, assetId, CUSTODY);
  }

  /** Takes each line's amount from what the wallet may spend: nothing while it owes a debt in the asset. */
  async reserve(trx: Knex.Transaction, lines: FundsLine[]): Promise<void> {
    for (const l of lines) {
      const spendable = await this.spendable(trx, l.walletId, l.assetId);
      if (spendable < l.rawAmount) throw new KeelError('INSUFFICIENT_FUNDS', 'Insufficient balance: the custody ledger holds less than this line that the wallet may spend (nothing while it owes a debt in the asset; a trading balance leaves through a withdrawal from trading)', { walletId: l.walletId, assetId: l.assetId });
      await this.ledger.debit(trx, { organizationId: l.organizationId, walletId: l.walletId, assetId: l.assetId, amount: l.rawAmount, reference: `transfer:${l.itemId}`, account: CUSTODY });
    }
  }

  async release(trx: Knex.Transaction, lines: FundsLine[]): Promise<void> {
    for (const l of lines.filter((x) => x.rawAmount > 0n)) await this.ledger.credit(trx, { organizationId: l.organizationId, walletId: l.walletId, assetId: l.assetId, amount: l.rawAmount, reference: `transfer-refund:${l.itemId}`, account: CUSTODY });
  }

  async executed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    await this.chargeGas(trx, item);
  }

  async failed(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    // An NFT line reserved nothing (TransferService.insert): only its gas is charged.
    if (item.tokenId === null) await this.release(trx, [{ organizationId: item.organizationId, walletId: item.addressId ?? item.masterWalletId, assetId: item.assetId, rawAmount: BigInt(item.rawAmount), itemId: item.id }]);
    await this.chargeGas(trx, item); // a transaction reverted on chain still paid for its gas
  }

  /**
   * Gas is not known until the transaction is mined, so it cannot be reserved up front: it is taken
   * from what is available, and what the wallet had not available becomes its debt (chargeGasTo).
   */
  private async chargeGas(trx: Knex.Transaction, item: SendingItem): Promise<void> {
    const fee = item.feePaid ? BigInt(item.feePaid) : 0n;
    await this.chargeGasTo(trx, { organizationId: item.organizationId, walletId: item.addressId ?? item.masterWalletId, blockchainId: item.blockchainId, fee, reference: `gas:${item.id}` });
  }

  /**
   * Debits the gas of a transaction a wallet sent that is no transfer line (`keel settlement exit`'s)
   * under the reference the deposit watcher charges it by (feesConfirmed): once, whichever comes first.
   */
  async chargeTransactionGas(trx: Knex.Transaction, charge: { organizationId: string; walletId: string; blockchainId: string; txHash: string; fee: bigint }): Promise<void> {
    const reference = (await this.miningReference(trx, chainGasReference(charge.blockchainId, charge.txHash), 'next', GAS_KEYS))!;
    await this.chargeGasTo(trx, { ...charge, reference });
  }

  /**
   * Debits the gas a wallet's mined transaction paid from its native custody balance, once per
   * reference: the coin has left the chain, so what the wallet does not hold available (spent or
   * on its way out already) becomes its debt in the native coin, as an outflow's shortfall does
   * (outflowsConfirmed), and its next credits of the coin repay it.
   */
  async chargeGasTo(trx: Knex.Transaction, charge: GasCharge): Promise<void> {
    const { fee, walletId, reference } = charge;
    if (fee <= 0n) return;
    const native = await this.nativeOf(charge.blockchainId);
    if (!native) return;
    const { applied, shortfall } = await this.ledger.debitUpTo(trx, { organizationId: charge.organizationId, walletId, assetId: native, amount: fee, reference, account: CUSTODY });
    if (!applied) return;
    await trx('gas_charges').insert({ reference, organizationId: charge.organizationId, walletId, assetId: native, fee: fee.toString() });
    if (shortfall === 0n) return;
    await this.debts.record(trx, { organizationId: charge.organizationId, walletId, assetId: native, account: CUSTODY, amount: shortfall, reference });
    this.logger.warn({ reference, walletId, shortfall: shortfall.toString() }, 'gas paid beyond what the custody ledger held available: debt recorded');
  }

  /**
   * Gives back what chargeGasTo charged under `reference` (a reorg dropped the transaction): the
   * whole fee it charged (gas_charges), credited as any credit from the chain is, so it repays the
   * debt the charge left first; for a charge made before gas_charges, what its debit took. Never the
   * fee another fork's mining of the transaction paid. Idempotent; nothing when nothing was charged.
   */
  async refundGas(trx: Knex.Transaction, reference: string): Promise<void> {
    const charged = await trx('ledger_entries').where({ idempotencyKey: `debit:${reference}` }).first('organizationId', 'walletId', 'assetId', 'availableDelta');
    if (!charged) return;
    const whole = await trx('gas_charges').where({ reference }).first('fee');
    const amount = whole ? BigInt(whole.fee) : -BigInt(charged.availableDelta);
    if (amount > 0n) await this.creditFromChain(trx, { organizationId: charged.organizationId, walletId: charged.walletId, assetId: charged.assetId, amount, reference: `reorged:${reference}` });
  }

  private async nativeOf(blockchainId: string): Promise<string | undefined> {
    return (await this.chains.assetsOf(blockchainId)).find((a) => a.isNative)?.id;
  }
}
