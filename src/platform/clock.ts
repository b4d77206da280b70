/** Where "now" comes from, so a test can move it (across a quota's month boundary, say). */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };
