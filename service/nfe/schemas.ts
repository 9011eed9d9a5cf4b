// TypeBox schemas of the NF-e endpoints (today the return, NF-e de devolução): they validate the
// request (shape and types: an unknown field or a wrong type is a 400), type the handlers,
// serialize the answers and describe the payload in the OpenAPI document, since the
// specification does not show it. Values (quantities, documents, the items of the NFC-e) are
// checked by the fiscal builder, which names every broken field at once: 422 `validacao`.

import { Type } from '@sinclair/typebox';
import { strict } from '../../base/common/api/schema.ts';

export { DevolucaoBody, NfeAccepted as Accepted, NfeReplay, NfeView } from '../../base/common/api/nfe.ts';

export const IdParams = Type.Object({ id: Type.String({ description: 'id da NF-e' }) }, strict);

export const XmlResponse = {
  description: 'nfeProc (NFe + protNFe, procNFe_v4.00.xsd) quando autorizada; a NFe assinada nos demais estados',
  content: { 'application/xml': { schema: Type.String() } },
};
