// A terminal error as the screen holds it: an Error (so it can be thrown and caught like any
// other) that keeps the core's code, field and remedy, which a plain Error loses on the carrier.

import type { TerminalErrorCode, TerminalErrorData } from '../../electron/api/terminal-api.ts';

export class TerminalFailure extends Error {
  readonly data: TerminalErrorData;

  constructor(data: TerminalErrorData) {
    super(data.message);
    this.name = 'TerminalFailure';
    this.data = data;
  }

  get code(): TerminalErrorCode {
    return this.data.code;
  }

  get field(): string | undefined {
    return this.data.field;
  }

  get remedy(): 'devolucao' | undefined {
    return this.data.remedy;
  }
}

const CODES: ReadonlySet<string> = new Set<TerminalErrorCode>([
  'nao_encontrado',
  'estado_invalido',
  'produto_nao_encontrado',
  'etiqueta_invalida',
  'quantidade_invalida',
  'documento_invalido',
  'pagamento_invalido',
  'pagamento_insuficiente',
  'venda_vazia',
  'justificativa_invalida',
  'pin_invalido',
  'gerente_bloqueado',
  'prazo_expirado',
  'servico_indisponivel',
  'erro_servico',
  'configuracao_invalida',
  'certificado_invalido',
  'contingencia_limite',
  'impressora',
  'caixa_fechado',
  'serie_em_uso',
]);

/** Whether an envelope's `error` really is terminal error data (a carrier may answer garbage). */
export function isTerminalErrorData(value: unknown): value is TerminalErrorData {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.code === 'string' && CODES.has(v.code) && typeof v.message === 'string';
}

/** Anything thrown, as a failure the screen can show: unknown errors become a generic one. */
export function asFailure(err: unknown): TerminalFailure {
  if (err instanceof TerminalFailure) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new TerminalFailure({ code: 'estado_invalido', message: `Erro inesperado na tela: ${message}` });
}
