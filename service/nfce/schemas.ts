// TypeBox schemas of the NFC-e endpoints: written once, they validate requests (strictly: an
// unknown field is a 400, never silently dropped), type the handlers, serialize the answers and
// describe all of it in the OpenAPI document.
//
// The JSON receipt's schema is the API contract's, base/common/api/nfce.ts NfceRequest (shape and
// types only: a 400); its values are the fiscal builder's to check (a 422 validacao).

import { Type, type Static } from '@sinclair/typebox';
import { AccessKey, MAX_KEY_LENGTH, strict } from '../../base/common/api/schema.ts';
import { sampleNfceRequest } from '../../fiscal/samples.ts';

export { AuthorityStatus, CancelBody, NfceAccepted as Accepted, NfceReplay, NfceView, STATUSES, VoidBody, VoidView } from '../../base/common/api/nfce.ts';
import { NfceRequest, NfceView, STATUSES } from '../../base/common/api/nfce.ts';
import { IdempotencyHeaders, ReferenciaExterna } from '../idempotency.ts';
import { MAX_WAIT_SECONDS } from '../http/prefer.ts';
import { dayParams, PageEnvelope, pagingParams } from '../http/lists.ts';
import { pdfAnswer, xmlAnswer } from '../http/media.ts';

/** The JSON receipt: the one contract of the NFC-e request, base/common/api/nfce.ts NfceRequest (fiscal/nfce/types.ts takes its type from it). */
export const NfceBody = NfceRequest;
export type NfceBody = NfceRequest;

export const ContingencyBody = Type.Object(
  {
    xml: Type.String({ minLength: 1, description: '<NFe> assinada, emitida no terminal em contingência offline (tpEmis 9)' }),
    referencia_externa: Type.Optional(ReferenciaExterna),
  },
  { ...strict, description: 'NFC-e emitida em contingência offline: transmitida sem alteração (mesma chave, mesmo digest)' },
);
export type ContingencyBody = Static<typeof ContingencyBody>;

/**
 * Either body, told apart by the presence of `xml`. if/then/else rather than oneOf, so that a
 * broken body is reported against the form it meant to be, field by field.
 */
export const IssueBody = Type.Unsafe<NfceBody | ContingencyBody>({
  if: { type: 'object', required: ['xml'] },
  then: ContingencyBody,
  else: NfceBody,
  description: 'NFC-e em JSON ou { "xml": "<NFe ...assinada...>" } emitida em contingência',
  // The sample receipt every test and bench issues: one item, paid in cash.
  examples: [sampleNfceRequest({ nNF: 1, serie: 1, items: 1 })],
});
export type IssueBody = Static<typeof IssueBody>;

export const IdParams = Type.Object({ id: Type.String({ description: 'id da NFC-e' }) }, strict);

/** The issuance's headers: the idempotency key, and the wait for the verdict (RFC 7240). */
export const IssueHeaders = Type.Object({
  ...IdempotencyHeaders.properties,
  prefer: Type.Optional(
    Type.String({
      description: `wait=N: espera até N segundos (no máximo ${MAX_WAIT_SECONDS}) pelo veredito da autoridade antes de responder (RFC 7240)`,
    }),
  ),
});

export const DanfeQuery = Type.Object(
  {
    formato: Type.Optional(
      Type.Union([Type.Literal('pdf'), Type.Literal('escpos')], {
        description: 'pdf (padrão) ou escpos: bytes ESC/POS para impressora térmica de 80 mm (48 colunas)',
      }),
    ),
  },
  strict,
);

export const XmlResponse = xmlAnswer('nfeProc (NFe + protNFe) quando autorizada ou cancelada; a NFe assinada nos demais estados');

export const DanfeResponse = pdfAnswer('DANFE NFC-e de 80 mm com QR Code', { 'application/octet-stream': 'ESC/POS, 48 colunas' });

// --- lists and lookups ------------------------------------------------------------------------

export const ListQuery = Type.Object(
  {
    ...pagingParams,
    status: Type.Optional(
      Type.Union(
        STATUSES.map((s) => Type.Literal(s)),
        { description: 'Situação: processando, autorizado, rejeitado, cancelado' },
      ),
    ),
    serie: Type.Optional(Type.Integer({ minimum: 0, maximum: 999, description: 'Série' })),
    ...dayParams('emissão (dhEmi)'),
    chave: Type.Optional(AccessKey('Chave de acesso')),
    referencia_externa: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_KEY_LENGTH, description: 'Chave de idempotência da emissão (todas as tentativas com ela)' }),
    ),
  },
  strict,
);

export const NfceList = PageEnvelope(NfceView);

export const KeyParams = Type.Object({ chave: AccessKey('Chave de acesso da NFC-e') }, strict);

export const InutilizacaoListQuery = Type.Object(
  { ...pagingParams, serie: Type.Optional(Type.Integer({ minimum: 0, maximum: 999, description: 'Série' })), ...dayParams('registro') },
  strict,
);

export const InutilizacaoView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  serie: Type.Integer(),
  numero_inicial: Type.Integer(),
  numero_final: Type.Integer(),
  justificativa: Type.String(),
  protocolo: Type.String(),
  codigo_status: Type.String({ description: '102: inutilização homologada' }),
  motivo: Type.String(),
  registrado_em: Type.String({ description: 'Registrada pelo serviço em, horário de Brasília' }),
});

export const InutilizacaoList = PageEnvelope(InutilizacaoView);

export const InutilizacaoXmlResponse = xmlAnswer('ProcInutNFe: o pedido assinado e a resposta da autoridade (procInutNFe_v4.00.xsd)');
