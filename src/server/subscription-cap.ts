import { GraphQLError } from 'graphql';
import { KeelError } from '../platform/errors';
import { asGraphQLError } from '../graphql-kit/errors';

/**
 * graphql-ws `onSubscribe`: at most `max` live operations on one connection. Each subscription
 * holds a listener that every matching event is fanned out to, so one connection must not open
 * thousands. A refused subscribe gets RATE_LIMIT_EXCEEDED; the connection and its other
 * subscriptions carry on. graphql-ws has already entered the new operation's id in
 * `ctx.subscriptions` when this runs, and removes an id as soon as its client completes it.
 */
export function subscriptionCap(max: number) {
  return (ctx: { subscriptions: Record<string, unknown> }): readonly GraphQLError[] | void => {
    if (Object.keys(ctx.subscriptions).length <= max) return;
    return [asGraphQLError(new KeelError('RATE_LIMIT_EXCEEDED', `At most ${max} subscriptions may run on one connection; complete one first`, { limit: max }))];
  };
}
