export * from './types';
export { MatchingEngine } from './matching-engine';
export { feeCeil } from './fees';
export { admitPlacement } from './market-rules';
export type { AdmittedPlacement, MarketUnits, PlacementRefusal, PlacementTerms, Steps } from './market-rules';
