/**
 * What a mined EVM transaction cost its sender. ethers' `receipt.fee` is gasUsed × effectiveGasPrice;
 * on OP-stack rollups (Base, Optimism) the sender also pays the L1 data fee, which the node reports
 * as the receipt's `l1Fee` and ethers drops with every field it does not know. Keel's providers keep
 * it, so `receipt.fee` is everything the sender paid, for every caller (the ledger's gas charges,
 * settlement batches, reconciliation).
 */
import { ethers } from 'ethers';

/** A receipt whose `fee` counts the L1 data fee too. */
class ReceiptWithL1Fee extends ethers.TransactionReceipt {
  constructor(
    receipt: ethers.TransactionReceipt,
    readonly l1Fee: bigint,
  ) {
    super(receipt as unknown as ethers.TransactionReceiptParams, receipt.provider);
  }

  override get fee(): bigint {
    return super.fee + this.l1Fee;
  }
}

/** The L1 data fee of a node's raw receipt (a hex quantity); 0 on a chain that reports none. */
function l1FeeOf(raw: unknown): bigint {
  const fee = (raw as { l1Fee?: unknown } | null)?.l1Fee;
  return typeof fee === 'string' && /^0x[0-9a-f]{1,64}$/i.test(fee) ? BigInt(fee) : 0n;
}

/** A JSON-RPC provider whose receipts keep the L1 data fee in `fee`. */
export class EvmJsonRpcProvider extends ethers.JsonRpcProvider {
  /** ethers hands this the node's answer to eth_getTransactionReceipt as it came (getTransactionReceipt, tx.wait()). */
  override _wrapTransactionReceipt(value: ethers.TransactionReceiptParams, network: ethers.Network): ethers.TransactionReceipt {
    const receipt = super._wrapTransactionReceipt(value, network);
    const l1Fee = l1FeeOf(value);
    return l1Fee > 0n ? new ReceiptWithL1Fee(receipt, l1Fee) : receipt;
  }
}
