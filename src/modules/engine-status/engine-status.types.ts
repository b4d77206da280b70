import { Field, Int, ObjectType } from 'type-graphql';

@ObjectType('EngineStatus', { description: "This node's view of the order-book engine" })
export class EngineStatusType {
  @Field({ description: 'RUNNING while this node serves the order book' }) status!: string;
  @Field({ description: 'Identifier of the answering node' }) nodeId!: string;
  @Field(() => Int) uptimeSeconds!: number;
  @Field() serverTime!: Date;
  @Field() environment!: string;
}
