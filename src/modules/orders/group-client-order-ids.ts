import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';

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
  private readonly holders = new Map<string, Promise<string | undefined>>();
  private readonly claimed = new Map<string, string>();

  constructor(private readonly db: Knex) {}

  /** Reads the holders of the ids a group will ask about in one query rather than one each. */
  prefetch(keys: ClientOrderKey[]): void {
    const missing = [...new Map(keys.filter((k) => !this.holders.has(keyOf(k))).map((k) => [keyOf(k), k])).values()];
    if (!missing.length) return;
    const read = this.db
      .raw(
        `SELECT o.organization_id AS "organizationId", o.client_order_id AS "clientOrderId", o.id
           FROM json_to_recordset(?::json) AS k("organizationId" uuid, "clientOrderId" text)
           JOIN orders o ON o.organization_id = k."organizationId" AND o.client_order_id = k."clientOrderId"`,
        [JSON.stringify(missing.map((k) => ({ organizationId: k.organizationId, clientOrderId: k.clientOrderId })))],
      )
      .then(({ rows }: { rows: (ClientOrderKey & { id: string })[] }) => new Map(rows.map((r) => [keyOf(r), r.id])));
    for (const k of missing) {
      const holder = read.then((found) => found.get(keyOf(k)));
      // A placement refused before it asks never awaits this: a failed read must not go unhandled.
      holder.catch(() => undefined);
      this.holders.set(keyOf(k), holder);
    }
  }

  /** DUPLICATE_ENTRY, naming the order that holds it, unless the organisation's clientOrderId is free in the record and in the group. */
  async assertFree(k: ClientOrderKey): Promise<void> {
    this.prefetch([k]);
    const holder = this.claimed.get(keyOf(k)) ?? (await this.holders.get(keyOf(k)));
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
