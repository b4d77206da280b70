export * from './types';
export { MatchingEngine } from './matching-engine';
export { feeFor } from './fees';
