/** The agents' vocabulary, as services take and return it; agent.types.ts registers it for GraphQL. */
export const AgentStatus = {
  ACTIVE: 'ACTIVE',
  SUSPENDED: 'SUSPENDED',
} as const;
export type AgentStatus = (typeof AgentStatus)[keyof typeof AgentStatus];

export const AgentPaymentStatus = {
  PENDING: 'PENDING',
  POLICY_DENIED: 'POLICY_DENIED',
  APPROVED: 'APPROVED',
  SUBMITTED: 'SUBMITTED',
  EXECUTED: 'EXECUTED',
  FAILED: 'FAILED',
} as const;
export type AgentPaymentStatus = (typeof AgentPaymentStatus)[keyof typeof AgentPaymentStatus];
