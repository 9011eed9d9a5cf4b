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

/**
 * Runs a subcommand's `parse`: its arguments, or the exit code once the usage was printed (on
 * stdout with 0 when help was asked for; after the error, on stderr with 2 for bad usage).
 */
export function parseCommand<T>(args: string[], usage: string, parse: (args: string[]) => T | 'help'): { args: T } | { exit: number } {
  let parsed: T | 'help';
  try {
    parsed = parse(args);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n\n${usage}`);
    return { exit: EXIT_USAGE };
  }
  if (parsed === 'help') {
    process.stdout.write(usage);
    return { exit: 0 };
  }
  return { args: parsed };
}
