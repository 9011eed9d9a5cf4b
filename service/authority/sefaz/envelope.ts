// The SOAP 1.2 request, written by hand because it is a fixed frame around the message: the
// envelope, the MDF-e header when the service has one, the body wrapper in the WSDL namespace,
// and the Content-Type whose `action` parameter names the operation (SOAP 1.2 has no SOAPAction
// header; SP, PR and the MDF-e services accept nothing but 1.2).
//
// The message goes in as the fiscal builders wrote it: no XML declaration (it would be invalid
// inside the body) and no whitespace between tags (rejection 588).

import { gzipSync } from 'node:zlib';
import { layoutVersion, requestWrapper, SERVICES, SOAP12_NS, soapAction, wsdlNamespace, type ServiceName } from './services.ts';

export type SoapRequest = { body: string; contentType: string };

/** The message without an XML declaration or BOM, and without blanks around it. */
export function bareMessage(xml: string): string {
  return xml.replace(/^\uFEFF?\s*(<\?xml[^?]*\?>)?\s*/, '').trimEnd();
}

/**
 * The request for one service. `cUF`: the emitter's UF code, for mdfeCabecMsg. For
 * MDFeRecepcaoSinc `message` is the signed MDFe, sent as base64(gzip(UTF-8)).
 */
export function soapRequest(service: ServiceName, message: string, cUF: string): SoapRequest {
  const spec = SERVICES[service];
  const ns = wsdlNamespace(service);
  const content = spec.gzip ? gzipSync(Buffer.from(bareMessage(message), 'utf8')).toString('base64') : bareMessage(message);
  const header = spec.header
    ? `<soap12:Header><mdfeCabecMsg xmlns="${ns}"><cUF>${cUF}</cUF><versaoDados>${layoutVersion(service)}</versaoDados></mdfeCabecMsg></soap12:Header>`
    : '';
  const wrapper = requestWrapper(service);
  const body =
    `<?xml version="1.0" encoding="utf-8"?>` +
    `<soap12:Envelope xmlns:soap12="${SOAP12_NS}">${header}` +
    `<soap12:Body><${wrapper} xmlns="${ns}">${content}</${wrapper}></soap12:Body></soap12:Envelope>`;
  return { body, contentType: `application/soap+xml;charset=utf-8;action="${soapAction(service)}"` };
}
