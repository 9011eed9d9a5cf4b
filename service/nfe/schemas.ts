// TypeBox schemas of the NF-e endpoints (today the return, NF-e de devolução): they validate the
// request (shape and types: an unknown field or a wrong type is a 400), type the handlers,
// serialize the answers and describe the payload in the OpenAPI document, since the
// specification does not show it. Values (quantities, documents, the items of the NFC-e) are
// checked by the fiscal builder, which names every broken field at once: 422 `validacao`.

import { Type } from '@sinclair/typebox';
import { NfeSummaryView } from '../../base/common/api/nfe.ts';
import { AccessKey, MAX_KEY_LENGTH, strict } from '../../base/common/api/schema.ts';
import { dayParams, PageEnvelope, pagingParams } from '../http/lists.ts';
import { pdfAnswer, xmlAnswer } from '../http/media.ts';

export { DevolucaoBody, NfeAccepted as Accepted, NfeReplay, NfeSummaryView, NfeView } from '../../base/common/api/nfe.ts';

export const IdParams = Type.Object({ id: Type.String({ description: 'id da NF-e' }) }, strict);

export const XmlResponse = xmlAnswer('nfeProc (NFe + protNFe, procNFe_v4.00.xsd) quando autorizada; a NFe assinada nos demais estados');

export const ListQuery = Type.Object(
  {
    ...pagingParams,
    situacao: Type.Optional(Type.Union([Type.Literal('processando'), Type.Literal('autorizado'), Type.Literal('rejeitado')], { description: 'Situação' })),
    serie: Type.Optional(Type.Integer({ minimum: 0, maximum: 999, description: 'Série' })),
    ...dayParams('emissão (dhEmi)'),
    chave: Type.Optional(AccessKey('Chave de acesso da NF-e')),
    chave_nfce: Type.Optional(AccessKey('Chave de acesso da NFC-e devolvida: as devoluções dessa venda')),
    referencia_externa: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_KEY_LENGTH, description: 'Chave de idempotência da emissão (todas as tentativas com ela)' }),
    ),
  },
  strict,
);

export const NfeList = PageEnvelope(NfeSummaryView);

export const KeyParams = Type.Object({ chave: AccessKey('Chave de acesso da NF-e') }, strict);

export const DanfeResponse = pdfAnswer('DANFE da NF-e (modelo 55), A4');
