// The one error the screen API rejects with: a code the screen can branch on and a Portuguese
// message it can show as is. It serialises to TerminalErrorData, so it crosses IPC and the
// browser-mode host unchanged.

import { FieldError } from '../../fiscal/errors.ts';
import type { TerminalErrorCode, TerminalErrorData } from '../api/terminal-api.ts';

export class TerminalError extends Error implements TerminalErrorData {
  override name = 'TerminalError';
  readonly code: TerminalErrorCode;
  readonly field?: string;
  readonly remedy?: 'devolucao';

  constructor(code: TerminalErrorCode, message: string, extra: { field?: string; remedy?: 'devolucao' } = {}) {
    super(message);
    this.code = code;
    if (extra.field !== undefined) this.field = extra.field;
    if (extra.remedy !== undefined) this.remedy = extra.remedy;
  }

  toJSON(): TerminalErrorData {
    return {
      code: this.code,
      message: this.message,
      ...(this.field !== undefined && { field: this.field }),
      ...(this.remedy !== undefined && { remedy: this.remedy }),
    };
  }
}

/** Runs a fiscal check, turning its FieldError into a TerminalError about `field`. */
export function checked<T>(code: TerminalErrorCode, field: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof FieldError) {
      const message = err.issues.map((i) => i.message).join('; ');
      throw new TerminalError(code, message.charAt(0).toUpperCase() + message.slice(1), { field });
    }
    throw err;
  }
}
