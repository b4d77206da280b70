import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { heldByAml } from '../deposits';
import type { ChainPort } from '../../platform/chain-port/chain-port';
import type { ChainService } from '../chains';
import type { SendingWallet, SendingWallets } from '../wallets';
import type { TransferService } from './transfer.service';
import { GasPayerHeld, type GasPayer } from './transfer.domain';

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
   * The id of the top-up line the send must wait for, or null when `source` already holds `gasCost`.
   * INSUFFICIENT_FUNDS when it does not and cannot be topped up: a master wallet (nothing above it to
   * pay), or `fromMaster` false (the wallet's enableGaslessWithdraw is off). `payer`: a wallet the
   * organisation named to pay the gas instead of the master wallet (a gas sponsor; any of its
   * wallets, a master wallet's own address included). `status`: the top-up waits for approval with
   * the send it pays for, so a rejected send spends no gas money. GasPayerHeld when the master
   * wallet would pay and holds a flagged deposit not released (a payer the organisation named pays
   * as it asked, as a withdrawal it asks for would).
   */
  async ensure(trx: Knex.Transaction, source: SendingWallet, network: { blockchainId: string; port: ChainPort }, gasCost: bigint, opts: { status?: 'QUEUED' | 'PENDING_APPROVAL'; fromMaster?: boolean; payer?: SendingWallet } = {}): Promise<string | null> {
    const nativeBalance = await network.port.balance(source.address, { kind: 'native' });
    if (nativeBalance >= gasCost) return null;
    if (!opts.payer && (!source.addressId || opts.fromMaster === false)) {
      throw new KeelError('INSUFFICIENT_FUNDS', `${source.address} holds too little native coin to pay the gas${source.addressId ? ' and enableGaslessWithdraw is off' : ''}`);
    }
    const native = (await this.chains.assetsOf(network.blockchainId, trx)).find((a) => a.isNative);
    if (!native) throw new KeelError('INVALID_NETWORK', 'The chain has no native coin registered');
    const nativeView = (await this.chains.assetViews([native.id], trx)).get(native.id)!;
    const payer = opts.payer ?? (await this.wallets.resolve(source.organizationId, { masterWalletId: source.masterWalletId }, trx));
    if (!opts.payer && (await heldByAml(trx, { masterWalletId: payer.masterWalletId, addressId: null }))) throw new GasPayerHeld(payer.address);
    const topUp = await this.transfers.enqueue(trx, payer, network.blockchainId, 'gas_topup', [{ asset: nativeView, recipient: source.address, rawAmount: gasCost - nativeBalance }], opts.status);
    return topUp.itemIds[0];
  }
}
