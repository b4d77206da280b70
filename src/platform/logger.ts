import pino, { Logger } from 'pino';

/**
 * Structured JSON logs. Credentials and wallet secrets are redacted by path so that a careless
 * log call cannot leak them; modules should still never log secrets on purpose.
 */
export const REDACT_PATHS = [
  'req.headers.apikey',
  'req.headers.authorization',
  'req.headers["idempotency-key"]',
  '*.apiKey',
  '*.secret',
  '*.mnemonic',
  '*.privateKey',
  '*.sealedMnemonic',
  '*.sealedSecret',
  '*.sealedSecrets',
  '*.password',
  'apiKey',
  'secret',
  'mnemonic',
  'privateKey',
  'sealedMnemonic',
  'sealedSecret',
  'sealedSecrets',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'keel' } }, destination);
}

export type { Logger };
