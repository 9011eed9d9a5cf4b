// What POST /api/v1/nfce checks before it accepts a receipt, and the document it then stores.
//
// - JSON (specification 2.3): built now with the fiscal builder, unsigned, which checks every
//   value and yields the access key, cNF and dhEmi (the company clock). The queue signs the same
//   request later with the same cNF and dhEmi: the key in the 202 is final.
// - Offline contingency `{ xml }`: the NFC-e the terminal issued and signed with tpEmis 9. It must
//   pass the schema, carry a valid signature made with the company's own certificate and name the
//   company as emitter; it is then transmitted as received (same key, same digest).

import { urlChaveOf } from '../../fiscal/br/nfce-urls.ts';
import { sameCertificate } from '../../fiscal/certificate.ts';
import { FieldError } from '../../fiscal/errors.ts';
import { buildNfce, readNfceSummary, type NfceSummary } from '../../fiscal/nfce/build.ts';
import type { NfceRequest } from '../../fiscal/nfce/types.ts';
import { validateXml } from '../../fiscal/schema.ts';
import { verifyXmlSignature } from '../../fiscal/signature.ts';
import { ApiError } from '../http/errors.ts';
import { BODY_KEY_FIELD } from '../idempotency.ts';
import type { NfceIssuer } from './issuer.ts';
import type { NfceBody } from './schemas.ts';
import type { NewNfceDocument } from './store.ts';

type Accepted = Omit<NewNfceDocument, 'idempotencyKey'>;

export function acceptJson(body: NfceBody, issuer: NfceIssuer, id: string, now: Date): Accepted {
  // The idempotency key travels in the body but is not part of the receipt.
  const { [BODY_KEY_FIELD]: _key, ...request } = body;
  const built = buildNfce(request as NfceRequest, { emitter: issuer.emitter, dhEmi: now, tpEmis: 1 });
  return {
    id,
    companyId: issuer.company.id,
    serie: body.ide.serie,
    numero: body.ide.nNF,
    chave: built.key,
    cNF: built.cNF,
    dhEmi: built.dhEmi,
    tpEmis: 1,
    contingencia: false,
    ambiente: issuer.emitter.environment,
    qrcode: null,
    urlConsulta: urlChaveOf(built.uf, built.tpAmb),
    valorTotal: built.vNF,
    requestJson: JSON.stringify(request),
    createdAt: new Date(),
  };
}

const refuse = (message: string) =>
  new ApiError('validacao', 'O XML de contingência não pode ser aceito; veja os detalhes.', { details: [{ field: 'xml', message }] });

export function acceptContingency(xml: string, issuer: NfceIssuer, id: string): Accepted {
  const schema = validateXml(xml, 'nfe');
  if (!schema.valid) throw refuse(`não confere com o schema nfe_v4.00.xsd: ${schema.errors[0] ?? 'XML inválido'}`);
  const signature = verifyXmlSignature(xml);
  if (!signature.valid) throw refuse(`assinatura digital inválida (${signature.reason})`);
  let summary: NfceSummary;
  try {
    summary = readNfceSummary(xml);
  } catch (err) {
    if (err instanceof FieldError) throw refuse(err.issues[0]?.message ?? err.message);
    throw err;
  }
  if (summary.key.slice(20, 22) !== '65') throw refuse('não é uma NFC-e (modelo 65)');
  if (summary.tpEmis !== 9) {
    throw refuse(`tpEmis ${summary.tpEmis}: só uma NFC-e emitida em contingência offline (tpEmis 9) é enviada como XML; as demais vão em JSON`);
  }
  if (summary.cnpj !== issuer.emitter.cnpj) throw refuse(`o emitente (CNPJ ${summary.cnpj}) não é esta empresa (CNPJ ${issuer.emitter.cnpj})`);
  if (!sameCertificate(signature.certificatePem, issuer.certificate.certificatePem)) {
    throw refuse('assinada com um certificado que não é o certificado digital cadastrado para a empresa');
  }
  return {
    id,
    companyId: issuer.company.id,
    serie: summary.serie,
    numero: summary.nNF,
    chave: summary.key,
    cNF: summary.key.slice(35, 43),
    dhEmi: summary.dhEmi,
    tpEmis: 9,
    contingencia: true,
    ambiente: summary.tpAmb === 1 ? 'producao' : 'homologacao',
    qrcode: summary.qrCode,
    urlConsulta: summary.urlChave,
    valorTotal: summary.vNF,
    receivedXml: xml,
    createdAt: new Date(),
  };
}
