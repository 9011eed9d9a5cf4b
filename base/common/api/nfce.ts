// The NFC-e's part of the API contract (docs/api.md, "NFC-e"): what the service answers (the 202,
// the document, the replay, an inutilização) and the bodies of a cancellation and an
// inutilização. Written once as TypeBox schemas: the service validates, serializes and
// documents with them; the terminal's client takes its types from them.

import { Type, type Static } from '@sinclair/typebox';
import { AccessKey, Nullable, strict } from './schema.ts';

/** What the service last learned of the company's tax authority (authority/availability.ts). */
export const AuthorityStatus = Type.Object(
  {
    situacao: Type.Union([Type.Literal('disponivel'), Type.Literal('indisponivel'), Type.Literal('desconhecida')]),
    desde: Nullable(Type.String({ description: 'Desde quando, horário de Brasília (null: desconhecida)' })),
  },
  {
    description:
      'A autoridade fiscal como o serviço a viu na última chamada desta empresa: indisponivel = sem resposta (a NFC-e espera; ' +
      'um PDV pode emitir em contingência offline), disponivel = respondeu, desconhecida = nenhuma chamada ainda',
  },
);

export const NfceAccepted = Type.Object({
  id: Type.String({ format: 'uuid', description: 'Identificador da NFC-e' }),
  chave: Type.String({ description: 'Chave de acesso (44 posições), definitiva desde já' }),
  status: Type.Literal('processando'),
  message: Type.String(),
  autoridade: AuthorityStatus,
});

export const STATUSES = ['processando', 'autorizado', 'rejeitado', 'cancelado'] as const;

const NfceViewFields = {
  id: Type.String({ format: 'uuid' }),
  chave: Type.String({ description: 'Chave de acesso' }),
  numero: Type.Integer({ description: 'nNF' }),
  serie: Type.Integer(),
  status: Type.Union(
    STATUSES.map((s) => Type.Literal(s)),
    { description: 'processando, autorizado, rejeitado ou cancelado' },
  ),
  codigo_status: Nullable(
    Type.String({
      description: 'cStat da autorização (ou da rejeição) pela autoridade fiscal; null enquanto processando. Cancelada, continua o da autorização',
    }),
  ),
  motivo: Nullable(Type.String({ description: 'xMotivo da autorização (ou da rejeição)' })),
  protocolo: Nullable(Type.String({ description: 'Protocolo de autorização' })),
  autorizado_em: Nullable(Type.String({ description: 'Data e hora da autorização (dhRecbto), horário de Brasília' })),
  cancelado_em: Nullable(Type.String({ description: 'Data e hora do cancelamento, horário de Brasília' })),
  protocolo_cancelamento: Nullable(Type.String({ description: 'Protocolo do evento de cancelamento' })),
  codigo_status_cancelamento: Nullable(
    Type.String({ description: 'cStat do evento de cancelamento (135: registrado); null sem evento guardado (cancelamento sabido por consulta)' }),
  ),
  motivo_cancelamento: Nullable(Type.String({ description: 'xMotivo do evento de cancelamento' })),
  emitido_em: Type.String({ description: 'dhEmi, horário de Brasília' }),
  valor_total: Type.String({ description: 'vNF (decimal)' }),
  qrcode: Nullable(Type.String({ description: 'Texto do QR Code (null até a NFC-e ser assinada)' })),
  url_consulta: Type.String({ description: 'URL de consulta pela chave de acesso' }),
  contingencia: Type.Boolean({ description: 'Emitida em contingência offline (tpEmis 9)' }),
  ambiente: Type.Union([Type.Literal('homologacao'), Type.Literal('producao')]),
  referencia_externa: Nullable(Type.String({ description: 'Chave de idempotência da emissão' })),
  criado_em: Type.String({ description: 'Recebida pelo serviço em, horário de Brasília' }),
};

export const NfceView = Type.Object({
  ...NfceViewFields,
  autoridade: Type.Optional(AuthorityStatus),
});
export type NfceView = Static<typeof NfceView>;

export const NfceReplay = Type.Object({
  ...NfceViewFields,
  idempotent_replay: Type.Boolean({ description: 'true: repetição de uma emissão já autorizada; nada novo foi emitido' }),
});

export type NfceAccepted = Static<typeof NfceAccepted>;
export type NfceReplay = Static<typeof NfceReplay>;
export type AuthorityStatus = Static<typeof AuthorityStatus>;
export type NfceStatus = (typeof STATUSES)[number];

const Justificativa = Type.String({ minLength: 15, maxLength: 255, description: 'De 15 a 255 caracteres' });

export const CancelBody = Type.Object(
  {
    justificativa: Justificativa,
    chave_substituta: Type.Optional(AccessKey('Cancelamento por substituição (evento 110112, até 168 h): chave da NFC-e de contingência que a substituiu')),
  },
  { ...strict, examples: [{ justificativa: 'Cliente desistiu da compra no caixa' }] },
);
export type CancelBody = Static<typeof CancelBody>;

export const VoidBody = Type.Object(
  {
    serie: Type.Integer({ minimum: 0, maximum: 999 }),
    numero_inicial: Type.Integer({ minimum: 1, maximum: 999_999_999 }),
    numero_final: Type.Integer({ minimum: 1, maximum: 999_999_999 }),
    justificativa: Justificativa,
  },
  { ...strict, examples: [{ serie: 1, numero_inicial: 900, numero_final: 905, justificativa: 'Numeração pulada por falha no sistema do caixa' }] },
);
export type VoidBody = Static<typeof VoidBody>;

export const VoidView = Type.Object({
  protocolo: Type.String(),
  codigo_status: Type.String({ description: '102: inutilização homologada' }),
  motivo: Type.String(),
});

export type VoidView = Static<typeof VoidView>;
