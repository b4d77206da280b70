import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import { BatchedLookup } from './batched-lookup';

interface ClientOrderKey {
  organizationId: string;
  clientOrderId: string;
}

/**
 * The clientOrderIds one group of placements uses, checked once for the group rather than once per
 * placement: their holders in the record read in one query, and the ids the group's earlier
 * placements claimed remembered. (Two groups of different markets claiming one id at once meet at
 * the record's unique index: one commit fails, and its placements run again alone.)
 */
export class GroupClientOrderIds {
  private readonly holders: BatchedLookup<ClientOrderKey, string>;
  private readonly claimed = new Map<string, string>();

  constructor(db: Knex) {
    this.holders = new BatchedLookup(keyOf, async (keys) => {
      const { rows } = await db.raw(
        `SELECT o.organization_id AS "organizationId", o.client_order_id AS "clientOrderId", o.id
           FROM json_to_recordset(?::json) AS k("organizationId" uuid, "clientOrderId" text)
           JOIN orders o ON o.organization_id = k."organizationId" AND o.client_order_id = k."clientOrderId"`,
        [JSON.stringify(keys.map((k) => ({ organizationId: k.organizationId, clientOrderId: k.clientOrderId })))],
      );
      return new Map((rows as (ClientOrderKey & { id: string })[]).map((r) => [keyOf(r), r.id]));
    });
  }

  /** Reads the holders of the ids a group will ask about in one query rather than one each. */
  prefetch(keys: ClientOrderKey[]): void {
    this.holders.prefetch(keys);
  }

  /** DUPLICATE_ENTRY, naming the order that holds it, unless the organisation's clientOrderId is free in the record and in the group. */
  async assertFree(k: ClientOrderKey): Promise<void> {
    const holder = this.claimed.get(keyOf(k)) ?? (await this.holders.get(k));
    if (holder) {
      throw new KeelError('DUPLICATE_ENTRY', 'clientOrderId is already used by another order of this organisation', { fields: [{ field: 'clientOrderId', error: 'is already used' }], orderId: holder });
    }
  }

  /** A placement the group records with this clientOrderId: later placements of the group find it taken. */
  claim(k: ClientOrderKey, orderId: string): void {
    this.claimed.set(keyOf(k), orderId);
  }
}

const keyOf = (k: ClientOrderKey) => `${k.organizationId}|${k.clientOrderId}`;
