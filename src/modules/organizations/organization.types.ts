import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { Tier } from './organization.domain';

registerEnumType(Tier, { name: 'Tier', description: 'Rate-limit tier' });

@ObjectType('Organization')
export class OrganizationType {
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => Tier) tier!: Tier;
  @Field({ description: 'Whether the operator has granted order-book (Pro) access' }) proAccess!: boolean;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
}
