import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { heldByAml } from '../deposits';
import { TransferRefused, type ChainPort } from '../../platform/chain-port/chain-port';
import { EvmChain } from '../../platform/chain-port/evm-chain';
import type { ChainService } from '../chains';
import type { SendingWallet, SendingWallets } from '../wallets';
import type { TransferService } from './transfer.service';
import { GasPayerHeld, type GasPayer } from './transfer.domain';
import { linesStillToSend } from './in-flight';
import { lineRequest } from './transaction-request';

/** The gas counted for a line still to send that the node cannot estimate yet (a call waiting for the approval queued before it): a DEX swap's or a deposit to trading's, with room. */
const UNESTIMATED_LINE_GAS = 300_000n;

/**
 * Gas for a send Keel decides on itself (an auto-sweep, a settlement rule's sweep or swap): a
 * deposit address holding less native coin than the send's gas gets the difference from its master
 * wallet first, as a `gas_topup` transfer the send waits for. The master wallet's ledger must be
 * able to spare it (TransferService reserves it, INSUFFICIENT_FUNDS otherwise), and the master
 * wallet must not be held by AML (GasPayerHeld otherwise: the caller holds its send).
 */
export class GasTopUps implements GasPayer {
  constructor(
    private readonly wallets: SendingWallets,
    private readonly chains: ChainService,
    private readonly transfers: TransferService,
  ) {}

  /**
   * The id of the top-up line the send must wait for, or null when `source` already holds `gasCost`
   * beside what its own lines still to be sent will spend (stillToSpend: a top-up that arrived for an
   * earlier send whose line is not sent yet is that line's, not this send's).
   * INSUFFICIENT_FUNDS when it does not and cannot be topped up: a master wallet (nothing above it to
   * pay), or `fromMaster` false (the wallet's enableGaslessWithdraw is off). `payer`: a wallet the
   * organisation named to pay the gas instead of the master wallet (a gas sponsor; any of its
   * wallets, a master wallet's own address included). `status`: the top-up waits for approval with
   * the send it pays for, so a rejected send spends no gas money. GasPayerHeld when the master
   * wallet would pay and holds a flagged deposit not released (a payer the organisation named pays
   * as it asked, as a withdrawal it asks for would).
   */
  async ensure(trx: Knex.Transaction, source: SendingWallet, network: { blockchainId: string; port: ChainPort }, gasCost: bigint, opts: { status?: 'QUEUED' | 'PENDING_APPROVAL'; fromMaster?: boolean; payer?: SendingWallet } = {}): Promise<string | null> {
    const [nativeBalance, committed] = await Promise.all([network.port.balance(source.address, { kind: 'native' }), this.stillToSpend(trx, source.address, network)]);
    const needed = gasCost + committed;
    if (nativeBalance >= needed) return null;
    if (!opts.payer && (!source.addressId || opts.fromMaster === false)) {
      throw new KeelError('INSUFFICIENT_FUNDS', `${source.address} holds too little native coin to pay the gas${source.addressId ? ' and enableGaslessWithdraw is off' : ''}`);
    }
    const native = (await this.chains.assetsOf(network.blockchainId, trx)).find((a) => a.isNative);
    if (!native) throw new KeelError('INVALID_NETWORK', 'The chain has no native coin registered');
    const nativeView = (await this.chains.assetViews([native.id], trx)).get(native.id)!;
    const payer = opts.payer ?? (await this.wallets.resolve(source.organizationId, { masterWalletId: source.masterWalletId }, trx));
    if (!opts.payer && (await heldByAml(trx, { masterWalletId: payer.masterWalletId, addressId: null }))) throw new GasPayerHeld(payer.address);
    const topUp = await this.transfers.enqueue(trx, payer, network.blockchainId, 'gas_topup', [{ asset: nativeView, recipient: source.address, rawAmount: needed - nativeBalance }], opts.status);
    return topUp.itemIds[0];
  }

  /**
   * What the address's own lines still to be sent (stillInBalance) will take of its native coin: the
   * coin each carries and, on EVM, its gas: a signed line's limit at its max fee (what the node holds
   * back for it), another's at the limit and fees the sender would sign it with now
   * (UNESTIMATED_LINE_GAS when the node cannot estimate it yet). A Solana line's fee is not counted.
   */
  private async stillToSpend(trx: Knex.Transaction, address: string, network: { blockchainId: string; port: ChainPort }): Promise<bigint> {
    const lines = await linesStillToSend(trx, address, network.blockchainId);
    if (!lines.length) return 0n;
    const assets = await this.chains.assetViews([...new Set(lines.map((l) => l.assetId))], trx);
    const evm = network.port instanceof EvmChain ? network.port : null;
    const maxFee = lines.some((l) => l.gasLimit === null || l.maxFeePerGas === null) && evm ? (await evm.fees()).maxFeePerGas : 0n;
    const spends = await Promise.all(
      lines.map(async (l) => {
        const asset = assets.get(l.assetId);
        const coin = l.callTo ? BigInt(l.callValue ?? 0) : asset?.isNative ? BigInt(l.rawAmount) : 0n;
        if (!evm || !asset) return coin;
        if (l.gasLimit !== null && l.maxFeePerGas !== null) return coin + BigInt(l.gasLimit) * BigInt(l.maxFeePerGas);
        const gas = await evm.gasLimit(address, lineRequest(asset, l)).catch((e: unknown) => {
          if (e instanceof TransferRefused) return UNESTIMATED_LINE_GAS;
          throw new KeelError('UPSTREAM_ERROR', "The chain's node did not answer the gas estimate; try again shortly");
        });
        return coin + gas * maxFee;
      }),
    );
    return spends.reduce((sum, x) => sum + x, 0n);
  }
}
