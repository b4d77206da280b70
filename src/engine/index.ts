export * from './types';
export { MatchingEngine } from './matching-engine';
export { feeCeil, feeFor } from './fees';
