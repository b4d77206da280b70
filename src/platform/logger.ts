import pino, { Logger } from 'pino';
import { loggedError, loggedMessage } from './logged-error';

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

/**
 * An error is logged as `{ err: error }` (or under `error`) and written in its safe form
 * (`loggedError`): type, message, code, stack and causes, with URLs cut to their origin and without
 * the request, response, payload or SQL a library hung on it. Logged alone (`logger.warn(error)`),
 * it is written the same way, and the line's message is the safe one too.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'keel' },
      serializers: { err: loggedError, error: loggedError },
      hooks: {
        logMethod(args, method) {
          const [first, second] = args as unknown[];
          if (first instanceof Error && typeof second !== 'string') return method.apply(this, [{ err: first }, loggedMessage(first), ...(args.slice(1) as [])]);
          return method.apply(this, args);
        },
      },
    },
    destination,
  );
}

export type { Logger };
