// The error contract of every endpoint (docs/api.md, "Errors"): the codes with their HTTP status,
// and the one body shape every 4xx and 5xx carries. The service answers with it
// (service/http/errors.ts); the terminal reads it (electron/core/api-client.ts) and has words for
// each code (electron/core/service-messages.ts).

import { Type, type Static } from '@sinclair/typebox';

export const ERROR_STATUS = {
  requisicao_invalida: 400,
  nao_autorizado: 401,
  nao_encontrado: 404,
  metodo_nao_permitido: 405,
  tempo_esgotado: 408,
  em_processamento: 409,
  serie_em_uso: 409,
  payload_muito_grande: 413,
  uri_muito_longa: 414,
  tipo_de_conteudo_invalido: 415,
  chave_idempotencia_reutilizada: 422,
  prazo_expirado: 422,
  estado_invalido: 422,
  csc_nao_configurado: 422,
  validacao: 422,
  cabecalhos_muito_grandes: 431,
  erro_interno: 500,
  autoridade_indisponivel: 503,
  servico_indisponivel: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'Código estável do erro (ex.: requisicao_invalida)' }),
      message: Type.String({ description: 'Texto em português' }),
      details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
      id: Type.Optional(Type.String({ description: 'em_processamento: id do documento em processamento' })),
      rejeicao: Type.Optional(
        Type.Object(
          { cStat: Type.String(), xMotivo: Type.String() },
          { description: 'validacao de um evento ou inutilização que a autoridade fiscal recusou: o código e o texto da SEFAZ' },
        ),
      ),
    }),
    id: Type.Optional(Type.String({ description: 'em_processamento: id do documento em processamento' })),
  },
  { description: 'Erro' },
);
export type ErrorBody = Static<typeof ErrorBody>;
