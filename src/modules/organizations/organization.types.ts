import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';

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
  @Field(() => TierEnum) tier!: TierEnum;
  @Field({ description: 'Whether the operator has granted order-book (Pro) access' }) proAccess!: boolean;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}
