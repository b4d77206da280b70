/** The webhooks' vocabulary, as services take and return it; webhook.types.ts registers it for GraphQL (WebhookDeliveryStatus). */
export const DeliveryStatus = {
  PENDING: 'PENDING',
  SUCCESS: 'SUCCESS',
  FAILED: 'FAILED',
} as const;
export type DeliveryStatus = (typeof DeliveryStatus)[keyof typeof DeliveryStatus];
