// Shared by the service's subcommands: node:util parseArgs with Portuguese errors that name the
// option, and the exit codes (2 = bad usage, like most Unix tools).

import { parseArgs, type ParseArgsConfig } from 'node:util';

export const EXIT_USAGE = 2;

export class UsageError extends Error {
  override name = 'UsageError';
}

/** parseArgs, strict, with its English errors turned into Portuguese ones naming the option. */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const option = /'(-{1,2}[^ ']+)/.exec(e.message)?.[1];
    switch (e.code) {
      case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
        throw new UsageError(`opção desconhecida: ${option ?? e.message}`);
      case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
        // parseArgs reads `--senha -abc` as a missing value followed by options: say how to pass it.
        if (/ambiguous/.test(e.message)) throw new UsageError(`${option ?? 'opção'}: o valor começa com "-"; escreva ${option ?? '--opcao'}=VALOR`);
        throw new UsageError(`${option ?? 'opção'}: valor ausente ou inválido`);
      case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
        throw new UsageError(`argumento inesperado: ${/'([^']+)'/.exec(e.message)?.[1] ?? e.message}`);
      default:
        throw new UsageError(e.message);
    }
  }
}
