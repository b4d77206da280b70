import { Arg, Args, Authorized, Ctx, ID, Query, Resolver, Root, Subscription, type SubscribeResolverData } from 'type-graphql';
import type { GraphQLContext } from '../../graphql-kit/context';
import type { EventEnvelope } from '../../platform/events/outbox';
import type { PageResult } from '../../platform/paging';
import type { SettlementBatchView } from './settlement-batch.service';
import { BatchStatus } from './settlement-batch.domain';
import { SettlementBatchEventType, SettlementBatchListArgs, SettlementBatchPage, SettlementBatchType } from './settlement-batch.types';
import type { SettlementServices } from '.';
import type { LiveEventFeed } from '../../platform/events/live-feed';
import { assertChannel, SETTLEMENT_CHANNEL } from '../realtime';

/** The services this resolver uses, all it is handed (src/schema.ts checks the composition root provides them). */
export type SettlementBatchResolverServices = Pick<SettlementServices, 'settlementBatches'> & { liveFeed: LiveEventFeed };
type Context = GraphQLContext<SettlementBatchResolverServices>;

/** The data of a settlement_batch.* event (batch-transitions.ts). */
interface BatchEventData {
  batchId: string;
  status: BatchStatus;
  previousStatus: string | null;
  blockchainId: string;
  tradeCount: number;
  txHash: string | null;
  blockNumber: string | null;
  reason: string | null;
}

@Resolver()
export class SettlementBatchResolver {
  @Authorized('orderbook_settlement:read')
  @Query(() => SettlementBatchPage, { description: 'Settlement batches, newest first (status, market, from, to)' })
  settlementBatches(@Args() args: SettlementBatchListArgs, @Ctx() ctx: Context): Promise<PageResult<SettlementBatchView>> {
    return ctx.services.settlementBatches.list(args);
  }

  @Authorized('orderbook_settlement:read')
  @Query(() => SettlementBatchType)
  settlementBatch(@Arg('id', () => ID) id: string, @Ctx() ctx: Context): Promise<SettlementBatchView> {
    return ctx.services.settlementBatches.get(id);
  }

  @Authorized('orderbook_settlement:read')
  @Subscription(() => SettlementBatchEventType, {
    description: "Channel settlement. Status changes of settlement batches holding the organisation's trades, as they are committed (optionally only some statuses)",
    subscribe: ({ args, context: ctx }: SubscribeResolverData<unknown, { statuses?: string[] }, Context>) => {
      assertChannel(ctx.principal, SETTLEMENT_CHANNEL);
      const statuses = args.statuses;
      return ctx.services.liveFeed.stream(ctx.principal.organizationId, (e) => e.type.startsWith('settlement_batch.') && (!statuses?.length || statuses.includes(String(e.data.status))));
    },
  })
  settlementBatchUpdates(
    @Root() envelope: EventEnvelope<BatchEventData>,
    @Arg('statuses', () => [BatchStatus], { nullable: true }) _statuses?: BatchStatus[],
  ): SettlementBatchEventType {
    return { ...envelope.data, timestamp: envelope.timestamp };
  }
}
