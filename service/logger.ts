// Structured logs: one JSON object per line on stdout, for whatever supervises the process.
// Fastify's request serializer logs method, URL and address only, never headers or bodies; the
// redaction below is the second lock, so a token, a certificate password, a CSC or a webhook
// secret never reaches a log line even if someone logs an object that holds one.

import pino, { type Logger } from 'pino';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'token',
  '*.token',
  'senha',
  '*.senha',
  'password',
  '*.password',
  'csc',
  '*.csc',
  'segredo',
  '*.segredo',
  'secret',
  '*.secret',
];

export function createLogger(options: { level?: string; destination?: pino.DestinationStream } = {}): Logger {
  return pino(
    {
      name: 'balcao-service',
      level: options.level ?? process.env.BALCAO_LOG_LEVEL ?? 'info',
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[oculto]' },
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
