/**
 * The realtime module's face: what other modules may use of it. Realtime order-book feeds for GraphQL subscriptions, shared per market and channel.
 * Other modules import only this file (its GraphQL classes, for their resolvers and types, from its *.types.ts);
 * its tables are read by its own files alone (ARCHITECTURE.md, Module faces).
 */
import type { RealtimeService } from './realtime.service';

export { createRealtimeServices } from './realtime-services';
/** The channel check every subscription of the order-book host makes (a realtime token is narrowed to channels). */
export { assertChannel, SETTLEMENT_CHANNEL } from './channels';

/** The realtime module's services, as the composition root (src/services.ts) wires them and resolvers name what they use. */
export interface RealtimeServices {
  /** Realtime order-book feeds for GraphQL subscriptions, shared per market and channel. */
  realtime: RealtimeService;
}
