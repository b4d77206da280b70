import { Knex } from 'knex';
import { KeelError } from '../../platform/errors';
import type { OutboundGuard } from '../../platform/net/outbound-guard';
import type { SecretBox } from '../../platform/crypto/secret-box';
import { coversSigningEvents, SIGNING_EVENT_NAMES, unknownEventTypes } from '../../platform/events/catalogue';
import { PageWindow, PageResult, toPage } from '../../platform/paging';
import { Ids } from '../../platform/ids';
import { WebhookDeliveryModel, WebhookSubscriptionModel } from './webhook.model';
import type { DeliveryStatus } from './webhook.domain';
import { generateWebhookSecret } from './webhook-signing';
import type { DeliveryScheduler } from './delivery-scheduler';
import { fetchPage } from '../../platform/db/fetch-page';
import type { UnitOfWork } from '../../platform/db/unit-of-work';
import { lockUntilCommit } from '../../platform/db/advisory-lock';

export interface SubscriptionView extends WebhookSubscriptionModel {
  secret: string | null;
}

export interface DeliveryView extends WebhookDeliveryModel {
  retryCount: number;
}

export interface CreateWebhook {
  url: string;
  name: string;
  description?: string;
  eventTypes: string[];
}

export interface UpdateWebhook {
  url?: string;
  isActive?: boolean;
  eventTypes?: string[];
  name?: string;
  description?: string;
}

const MAX_ROTATION_GRACE_SECONDS = 604_800;
const RECOVER_PAGE = 1_000;
/** The signing event names written out (constants), as migration 060's partial index reads them: a bound list would not match its predicate. */
const SIGNING_TYPES = `type IN (${SIGNING_EVENT_NAMES.map((n) => `'${n}'`).join(', ')})`;
const SUBSCRIBE_TO_SIGNING = 'subscribe to signing events (SIGNED_SUCCESS, SIGNED_FAILED, *.signed_*, master.*, address.* or *)';
/** What a 404 names. */
const SUBSCRIPTION = 'Webhook subscription';
const DELIVERY = 'Webhook event';

function subscriptionView(model: WebhookSubscriptionModel, secret: string | null = null): SubscriptionView {
  return Object.assign(model, { secret });
}

/**
 * A signing event carries its signature (for a transaction, the signed raw transaction, perhaps never
 * sent), which only admin credentials may read: so only they may choose where such events are sent.
 */
function signaturesNeedAdmin(action: string): KeelError {
  return KeelError.forbidden(`Only admin credentials may ${action}: signing events carry the signature (for a transaction, the signed raw transaction), which only admin credentials may read`);
}

export function deliveryView(model: WebhookDeliveryModel): DeliveryView {
  return Object.assign(model, { retryCount: Math.max(0, model.attempts - 1) });
}

/** Webhook subscriptions, their signing secrets and the delivery log. */
export class WebhookService {
  constructor(
    private readonly db: Knex,
    private readonly guard: OutboundGuard,
    private readonly scheduler: DeliveryScheduler,
    private readonly rotationGraceSeconds: number,
    private readonly box: SecretBox,
    private readonly uow: UnitOfWork,
    /** WEBHOOK_MAX_ACTIVE_SUBSCRIPTIONS: an event fans out to every active subscription in one relay transaction. */
    private readonly maxActiveSubscriptions: number,
  ) {}

  /** `mayReadSignatures`: the caller holds admin credentials (signing events are theirs alone to route). */
  async create(organizationId: string, developerId: string | null, input: CreateWebhook, mayReadSignatures: boolean): Promise<SubscriptionView> {
    await this.checkUrl(input.url);
    const eventTypes = this.checkEventTypes(input.eventTypes);
    if (!mayReadSignatures && coversSigningEvents(eventTypes)) throw signaturesNeedAdmin(SUBSCRIBE_TO_SIGNING);
    const secret = generateWebhookSecret();
    return this.uow.run('webhook.create', async (trx) => {
      await this.refuseBeyondActiveCap(trx, organizationId);
      const created = await WebhookSubscriptionModel.query(trx).insertAndFetch({
        organizationId,
        developerId,
        name: input.name,
        description: input.description ?? null,
        url: input.url,
        eventTypes,
      });
      await trx('webhook_secrets').insert({ subscriptionId: created.id, sealedSecret: this.box.seal(secret, created.id) });
      return subscriptionView(created, secret);
    });
  }

  async list(organizationId: string, page: PageWindow & { isActive?: boolean }): Promise<PageResult<SubscriptionView>> {
    const query = WebhookSubscriptionModel.query(this.db).where({ organizationId });
    if (page.isActive !== undefined && page.isActive !== null) query.where({ isActive: page.isActive });
    const { rows, total } = await fetchPage<WebhookSubscriptionModel>(query, page, [{ column: 'createdAt', order: 'desc' }, { column: 'id' }]);
    return toPage(rows.map((s) => subscriptionView(s)), total, page);
  }

  async get(organizationId: string, id: string): Promise<SubscriptionView> {
    id = Ids.uuid(SUBSCRIPTION, id);
    return subscriptionView(await this.findSubscription(this.db, organizationId, id));
  }

  async update(organizationId: string, id: string, input: UpdateWebhook, mayReadSignatures: boolean): Promise<SubscriptionView> {
    id = Ids.uuid(SUBSCRIPTION, id);
    if (input.url !== undefined && input.url !== null) await this.checkUrl(input.url);
    const patch: Partial<WebhookSubscriptionModel> = { updatedAt: new Date() };
    if (input.url != null) patch.url = input.url;
    if (input.eventTypes != null) patch.eventTypes = this.checkEventTypes(input.eventTypes);
    if (input.name != null) patch.name = input.name;
    if (input.description !== undefined) patch.description = input.description;
    if (input.isActive != null) {
      patch.isActive = input.isActive;
      if (input.isActive) Object.assign(patch, { failingSince: null, deactivatedAt: null, deactivationReason: null });
    }
    return this.uow.run('webhook.update', async (trx) => {
      const found = await this.findSubscription(trx, organizationId, id, true);
      if (!mayReadSignatures && (patch.url !== undefined || patch.eventTypes !== undefined || patch.isActive !== undefined)) {
        if (patch.eventTypes && coversSigningEvents(patch.eventTypes)) throw signaturesNeedAdmin(SUBSCRIBE_TO_SIGNING);
        if (await this.carriesSignatures(trx, found)) throw signaturesNeedAdmin('change the URL, event types or active state of a subscription that receives signing events');
      }
      if (patch.isActive && !found.isActive) await this.refuseBeyondActiveCap(trx, organizationId);
      return subscriptionView(await WebhookSubscriptionModel.query(trx).patchAndFetchById(id, patch));
    });
  }

  async delete(organizationId: string, id: string, mayReadSignatures: boolean): Promise<SubscriptionView> {
    id = Ids.uuid(SUBSCRIPTION, id);
    return this.uow.run('webhook.delete', async (trx) => {
      const found = await this.findSubscription(trx, organizationId, id, true);
      if (!mayReadSignatures && (await this.carriesSignatures(trx, found))) throw signaturesNeedAdmin('delete a subscription that receives signing events (and its delivery log)');
      await WebhookSubscriptionModel.query(trx).deleteById(id);
      return subscriptionView(found);
    });
  }

  /** A new secret; the previous ones keep signing (alongside it) until the grace period ends. */
  async rotateSecret(organizationId: string, id: string, gracePeriodSeconds: number | undefined, mayReadSignatures: boolean): Promise<SubscriptionView> {
    id = Ids.uuid(SUBSCRIPTION, id);
    const grace = Math.min(gracePeriodSeconds ?? this.rotationGraceSeconds, MAX_ROTATION_GRACE_SECONDS);
    const secret = generateWebhookSecret();
    return this.uow.run('webhook.rotate-secret', async (trx) => {
      const found = await this.findSubscription(trx, organizationId, id, true);
      if (!mayReadSignatures && (await this.carriesSignatures(trx, found))) throw signaturesNeedAdmin('rotate the secret of a subscription that receives signing events');
      const expiresAt = new Date(Date.now() + grace * 1000);
      await trx('webhook_secrets')
        .where({ subscriptionId: id })
        .where((q) => q.whereNull('expiresAt').orWhere('expiresAt', '>', expiresAt))
        .update({ expiresAt });
      await trx('webhook_secrets').insert({ subscriptionId: id, sealedSecret: this.box.seal(secret, id) });
      return subscriptionView(await WebhookSubscriptionModel.query(trx).patchAndFetchById(id, { updatedAt: new Date() }), secret);
    });
  }

  /** Queues every FAILED delivery of the subscription created since `since` for one more attempt now. */
  async recover(organizationId: string, id: string, since: Date, mayReadSignatures: boolean): Promise<number> {
    id = Ids.uuid(SUBSCRIPTION, id);
    const subscription = await this.findSubscription(this.db, organizationId, id);
    if (!mayReadSignatures && (await this.carriesSignatures(this.db, subscription))) throw signaturesNeedAdmin('recover the deliveries of a subscription that receives signing events');
    if (!subscription.isActive) throw new KeelError('CONFLICT', 'The subscription is inactive; reactivate it (PUT isActive: true) before recovering deliveries');
    // A page at a time, in id order: each statement stays short, and a delivery failing again meanwhile is not taken twice.
    let resent = 0;
    for (let after = '00000000-0000-0000-0000-000000000000'; ; ) {
      const ids: string[] = await this.db('webhook_deliveries')
        .where({ subscriptionId: id, status: 'FAILED' })
        .where('createdAt', '>=', since)
        .where('id', '>', after)
        .orderBy('id')
        .limit(RECOVER_PAGE)
        .pluck('id');
      if (!ids.length) return resent;
      const rows = await this.db('webhook_deliveries')
        .whereIn('id', ids)
        .where({ status: 'FAILED' })
        .update({ status: 'PENDING', nextAttemptAt: this.db.fn.now(), leaseUntil: null, updatedAt: this.db.fn.now() })
        .returning(['id', 'attempts', 'nextAttemptAt']);
      await this.scheduler.schedule(rows);
      resent += rows.length;
      after = ids[ids.length - 1];
    }
  }

  async listDeliveries(organizationId: string, args: PageWindow & { subscriptionId?: string; status?: DeliveryStatus }): Promise<PageResult<DeliveryView>> {
    const subscriptionId = Ids.filter('subscriptionId', args.subscriptionId || undefined);
    const query = WebhookDeliveryModel.query(this.db).where({ organizationId });
    if (subscriptionId) query.where({ subscriptionId });
    if (args.status) query.where({ status: args.status });
    const { rows, total } = await fetchPage<WebhookDeliveryModel>(query, args, [{ column: 'createdAt', order: 'desc' }, { column: 'eventSequence', order: 'desc' }]);
    return toPage(rows.map(deliveryView), total, args);
  }

  async getDelivery(organizationId: string, id: string): Promise<DeliveryView> {
    id = Ids.uuid(DELIVERY, id);
    const delivery = await WebhookDeliveryModel.query(this.db).findOne({ id, organizationId });
    if (!delivery) throw KeelError.notFound(DELIVERY);
    return deliveryView(delivery);
  }

  /** One more attempt now, whatever the delivery's state; it does not restart the schedule. */
  async resend(organizationId: string, id: string, mayReadSignatures: boolean): Promise<DeliveryView> {
    id = Ids.uuid(DELIVERY, id);
    if (!mayReadSignatures) {
      const delivery = await WebhookDeliveryModel.query(this.db).findOne({ id, organizationId });
      if (!delivery) throw KeelError.notFound(DELIVERY);
      if (await this.carriesSignatures(this.db, await this.findSubscription(this.db, organizationId, delivery.subscriptionId))) {
        throw signaturesNeedAdmin('resend the deliveries of a subscription that receives signing events');
      }
    }
    const [row] = await this.db('webhook_deliveries')
      .where({ id, organizationId })
      .update({ status: 'PENDING', nextAttemptAt: this.db.fn.now(), leaseUntil: null, updatedAt: this.db.fn.now() })
      .returning('*');
    if (!row) throw KeelError.notFound(DELIVERY);
    await this.scheduler.schedule([row]);
    return deliveryView(WebhookDeliveryModel.fromDatabaseJson(row));
  }

  private async findSubscription(db: Knex | Knex.Transaction, organizationId: string, id: string, forUpdate = false): Promise<WebhookSubscriptionModel> {
    const q = WebhookSubscriptionModel.query(db).findOne({ id, organizationId });
    const found = await (forUpdate ? q.forUpdate() : q);
    if (!found) throw KeelError.notFound(SUBSCRIPTION);
    return found;
  }

  /** One more active subscription is refused at the cap; creations and reactivations of the organisation take turns. */
  private async refuseBeyondActiveCap(trx: Knex.Transaction, organizationId: string): Promise<void> {
    await lockUntilCommit(trx, [`webhook-subscriptions:${organizationId}`]);
    const { count } = (await trx('webhook_subscriptions').where({ organizationId, isActive: true }).count({ count: '*' }).first())!;
    if (Number(count) >= this.maxActiveSubscriptions) {
      throw new KeelError('CONFLICT', `The organisation has ${this.maxActiveSubscriptions} active webhook subscriptions, the most it may have; delete or deactivate one first`, { limit: this.maxActiveSubscriptions });
    }
  }

  /**
   * Whether the subscription receives signing events, or its log holds one from before its event
   * types changed: a retry or resend of it goes to whatever URL the subscription has then.
   */
  private async carriesSignatures(db: Knex | Knex.Transaction, subscription: WebhookSubscriptionModel): Promise<boolean> {
    if (coversSigningEvents(subscription.eventTypes)) return true;
    return !!(await db('webhook_deliveries').where({ subscriptionId: subscription.id }).whereRaw(SIGNING_TYPES).first('id'));
  }

  private async checkUrl(url: string): Promise<void> {
    const refusal = await this.guard.refuseUrl(url);
    if (refusal) throw KeelError.invalidField('url', refusal);
  }

  private checkEventTypes(types: string[]): string[] {
    const unknown = unknownEventTypes(types);
    if (unknown.length) {
      throw KeelError.invalidField('eventTypes', `unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}; see GET /v1/webhooks/event-types`);
    }
    return [...new Set(types)];
  }
}
