// What POST /api/v1/nfce checks before it accepts a receipt, and the document it then stores.
//
// - JSON (docs/api.md, "NFC-e"): built now with the fiscal builder, unsigned, which checks every
//   value and yields the access key, cNF and dhEmi (the company clock). The queue signs the same
//   request later with the same cNF and dhEmi: the key in the 202 is final.
// - Offline contingency `{ xml }`: the NFC-e the terminal issued and signed with tpEmis 9. It must
//   pass the schema, carry a valid signature made with the company's own certificate and name the
//   company as emitter; it is then transmitted as received (same key, same digest).
//
// "The company's own certificate" is the one it had when the terminal signed: the current one,
// or one it replaced after that (see signingCertificateRefusal). A1 certificates are renewed
// yearly and a contingency receipt may be transmitted up to 24 h after it was issued and
// printed, so a renewal in between must not cost the sale.

import { urlChaveOf } from '../../fiscal/br/nfce-urls.ts';
import { fingerprint256Of, sameCertificate, type Certificate } from '../../fiscal/certificate.ts';
import { FieldError } from '../../fiscal/errors.ts';
import { buildNfce, readNfceSummary, type NfceSummary } from '../../fiscal/nfce/build.ts';
import { withIbptEstimate } from '../../fiscal/nfce/total.ts';
import { validateXml } from '../../fiscal/schema.ts';
import { verifyXmlSignature } from '../../fiscal/signature.ts';
import { brasiliaDay, formatBrasilia } from '../../base/common/brasilia.ts';
import { ApiError } from '../http/errors.ts';
import { BODY_KEY_FIELD } from '../idempotency.ts';
import type { ReplacedCertificate } from '../store.ts';
import type { AuthorizingIssuer } from '../queue/issuer.ts';
import type { NfceBody } from './schemas.ts';
import type { NewNfceDocument } from './store.ts';

type Accepted = Omit<NewNfceDocument, 'idempotencyKey'>;

export function acceptJson(body: NfceBody, issuer: AuthorizingIssuer, id: string, now: Date): Accepted {
  // The idempotency key travels in the body but is not part of the receipt.
  const { [BODY_KEY_FIELD]: _key, ...sent } = body;
  // Each item's approximate taxes from the IBPT table of the company's UF in force on dhEmi's day,
  // written into the request kept for signing, so the queue signs exactly what was checked here.
  const request = issuer.ibpt ? withIbptEstimate(sent, { tables: issuer.ibpt, uf: issuer.emitter.address.UF, date: brasiliaDay(now) }).request : sent;
  const built = buildNfce(request, { emitter: issuer.emitter, dhEmi: now, tpEmis: 1 });
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

export function acceptContingency(xml: string, issuer: AuthorizingIssuer, id: string): Accepted {
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
  const refusal = signingCertificateRefusal(signature.certificatePem, summary.dhEmi, issuer);
  if (refusal !== undefined) throw refuse(refusal);
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

/**
 * Whether `signerPem`, the certificate that signed a contingency receipt dated `dhEmi`, was the
 * company's when it signed; undefined when so, else why not (for the refusal, in Portuguese).
 *
 * - The current certificate: accepted, whatever the date (as before renewals were kept).
 * - A replaced one: accepted when it was valid at dhEmi (notBefore ≤ dhEmi ≤ notAfter, X.509's
 *   inclusive bounds) and dhEmi is strictly before its replacement. From `replacedAt` on it is no
 *   longer the company's: a receipt dated then or later was signed by a terminal (or whoever
 *   holds the old key) after the company stopped vouching for it. The comparison uses dhEmi as
 *   written (whole seconds, floored) against the commit instant in milliseconds, so a receipt
 *   signed before the replacement always passes; one signed in the same second after it may too.
 * - Before which instant it became the company's is not asked: the current certificate is not
 *   asked either (a renewed certificate installed at the terminal before the service is fine),
 *   and a certificate of the company's CNPJ valid at dhEmi is the company's own.
 *
 * dhEmi comes from the terminal's clock, and replacedAt from the real clock of the machine that
 * ran the update (the service's, the data directory being local), never a sandbox company clock.
 */
export function signingCertificateRefusal(
  signerPem: string,
  dhEmi: string,
  company: { certificate: Pick<Certificate, 'certificatePem'>; replacedCertificates: readonly ReplacedCertificate[] },
): string | undefined {
  if (sameCertificate(signerPem, company.certificate.certificatePem)) return undefined;
  const sha256 = fingerprint256Of(signerPem);
  const earlier = company.replacedCertificates.filter((c) => c.sha256 === sha256);
  if (earlier.length === 0) return 'assinada com um certificado que não é o certificado digital cadastrado para a empresa';
  const issuedAt = Date.parse(dhEmi);
  // Several rows for one certificate only when the company took it back after replacing it:
  // the same validity, and the company vouched for it again until its last replacement.
  const { notBefore, notAfter } = earlier[0]!;
  if (!(issuedAt >= Date.parse(notBefore) && issuedAt <= Date.parse(notAfter))) {
    return (
      `assinada com um certificado anterior da empresa que não era válido na emissão (dhEmi ${dhEmi}; ` +
      `validade de ${formatBrasilia(new Date(notBefore))} a ${formatBrasilia(new Date(notAfter))})`
    );
  }
  if (earlier.some((c) => issuedAt < Date.parse(c.replacedAt))) return undefined;
  const lastReplaced = new Date(Math.max(...earlier.map((c) => Date.parse(c.replacedAt))));
  return (
    `assinada com um certificado que a empresa substituiu em ${formatBrasilia(lastReplaced)}, mas emitida depois disso ` +
    `(dhEmi ${dhEmi}): uma NFC-e emitida após a substituição deve ser assinada com o certificado atual`
  );
}
