import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import type { Tier } from '../../platform/auth/permissions';

export enum TierEnum {
  Starter = 'Starter',
  Pro = 'Pro',
  Business = 'Business',
}
registerEnumType(TierEnum, { name: 'Tier', description: 'Rate-limit tier' });

@ObjectType('Organization')
export class OrganizationType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => TierEnum) tier!: Tier;
  @Field({ description: 'Whether the operator has granted order-book (Pro) access' }) proAccess!: boolean;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}
