import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { BookLevelType } from '../orders/order.types';
import type { BookMessage } from './book-feed';
import { BookMessageKind } from './realtime.domain';

registerEnumType(BookMessageKind, {
  name: 'BookMessageKind',
  description: 'SNAPSHOT: the whole book after book message `sequence`; replace what you hold. UPDATE: the levels book message `sequence` changed.',
});

@ObjectType('BookMessage', {
  description:
    'A message of the order-book subscription. `sequence` grows by exactly one per book message of the market (on every node, across leader changes): apply an UPDATE only when its sequence is the last one plus one; otherwise subscribe again (a new SNAPSHOT follows).',
})
export class BookMessageType implements BookMessage {
  @Field() market!: string;
  @Field(() => BookMessageKind) kind!: BookMessageKind;
  @Field({ description: "The market's book sequence after this message (a decimal integer as a string)" }) sequence!: string;
  @Field(() => [BookLevelType], { description: 'SNAPSHOT: every bid level, best (highest) first. UPDATE: the changed bid levels; quantity "0" and orders 0 remove the level.' })
  bids!: BookLevelType[];
  @Field(() => [BookLevelType], { description: 'SNAPSHOT: every ask level, best (lowest) first. UPDATE: the changed ask levels; quantity "0" and orders 0 remove the level.' })
  asks!: BookLevelType[];
  @Field({ description: 'UPDATE: when the change was committed. SNAPSHOT: when it was taken.' }) timestamp!: Date;
}
