import type { Tier as PlatformTier } from '../../platform/auth/permissions';

/** The organisations' vocabulary; organization.types.ts registers it for GraphQL. A rate-limit tier: the platform's Tier, one value each. */
export const Tier = {
  Starter: 'Starter',
  Pro: 'Pro',
  Business: 'Business',
} as const satisfies { [T in PlatformTier]: T };
export type Tier = (typeof Tier)[keyof typeof Tier];
