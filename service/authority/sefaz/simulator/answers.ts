// The simulator's answers, in each service's layout and element order (the ret* schemas in
// fiscal/schemas/), wrapped in a SOAP 1.2 envelope the way the authorizers write it: the answer
// in `nfeResultMsg` / `<operation>Result` of the WSDL namespace, mdfeCabecMsg echoed for the
// MDF-e services that take one, and an envelope prefix that changes from answer to answer
// (soap:, env:, S:) so that a client reading by prefix breaks here rather than in production.

import { brasiliaDateTime } from '../../../../fiscal/protocol.ts';
import { escapeXml } from '../../../../fiscal/xml.ts';
import { answerWrapper, layoutVersion, payloadNamespace, SERVICES, SOAP12_NS, wsdlNamespace, type ServiceName } from '../services.ts';

const PREFIXES = ['soap', 'env', 'S'] as const;
let nextPrefix = 0;

/** The SOAP 1.2 response around a ret* element (written with its own xmlns). */
export function soapAnswer(service: ServiceName, ret: string, cUF: string | undefined): string {
  const p = PREFIXES[nextPrefix++ % PREFIXES.length]!;
  const ns = wsdlNamespace(service);
  const header =
    SERVICES[service].header && cUF
      ? `<${p}:Header><mdfeCabecMsg xmlns="${ns}"><cUF>${cUF}</cUF><versaoDados>${layoutVersion(service)}</versaoDados></mdfeCabecMsg></${p}:Header>`
      : '';
  const wrapper = answerWrapper(service);
  return (
    `<?xml version="1.0" encoding="utf-8"?><${p}:Envelope xmlns:${p}="${SOAP12_NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
    `${header}<${p}:Body><${wrapper} xmlns="${ns}">${ret}</${wrapper}></${p}:Body></${p}:Envelope>`
  );
}

/** A SOAP 1.2 Fault, as the .asmx and Axis servers send it (HTTP 500). */
export function soapFault(code: 'Sender' | 'Receiver' | 'VersionMismatch', reason: string): string {
  return (
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${SOAP12_NS}"><soap:Body><soap:Fault>` +
    `<soap:Code><soap:Value>soap:${code}</soap:Value></soap:Code>` +
    `<soap:Reason><soap:Text xml:lang="pt-BR">${escapeXml(reason)}</soap:Text></soap:Reason>` +
    `</soap:Fault></soap:Body></soap:Envelope>`
  );
}

type Common = { tpAmb: '1' | '2'; verAplic: string; cUF: string; cStat: string; xMotivo: string; at?: Date };

const t = (name: string, value: string | undefined) => (value === undefined ? '' : `<${name}>${escapeXml(value)}</${name}>`);

/** The root element with the payload namespace of the service's family. */
function root(service: ServiceName, attrs: string, body: string): string {
  const name = SERVICES[service].answer;
  return `<${name} xmlns="${payloadNamespace(SERVICES[service].family)}"${attrs}>${body}</${name}>`;
}

type PlainField = 'tpAmb' | 'verAplic' | 'cStat' | 'xMotivo' | 'cUF' | 'cOrgao' | 'dhRecbto' | 'nRec' | 'chNFe' | 'idLote';

/** Each ret* element's common fields in its schema's order, inside `wrap` where the schema nests them. */
const PLAIN_LAYOUTS: Readonly<Record<ServiceName, { fields: readonly PlainField[]; wrap?: string }>> = {
  NFeAutorizacao4: { fields: ['tpAmb', 'verAplic', 'cStat', 'xMotivo', 'cUF', 'dhRecbto'] },
  NFeRetAutorizacao4: { fields: ['tpAmb', 'verAplic', 'nRec', 'cStat', 'xMotivo', 'cUF', 'dhRecbto'] },
  NFeConsultaProtocolo4: { fields: ['tpAmb', 'verAplic', 'cStat', 'xMotivo', 'cUF', 'dhRecbto', 'chNFe'] },
  NFeStatusServico4: { fields: ['tpAmb', 'verAplic', 'cStat', 'xMotivo', 'cUF', 'dhRecbto'] },
  NFeRecepcaoEvento4: { fields: ['idLote', 'tpAmb', 'verAplic', 'cOrgao', 'cStat', 'xMotivo'] },
  NFeInutilizacao4: { wrap: 'infInut', fields: ['tpAmb', 'verAplic', 'cStat', 'xMotivo', 'cUF', 'dhRecbto'] },
  MDFeRecepcaoSinc: { fields: ['tpAmb', 'cUF', 'verAplic', 'cStat', 'xMotivo'] },
  MDFeRecepcaoEvento: { wrap: 'infEvento', fields: ['tpAmb', 'verAplic', 'cOrgao', 'cStat', 'xMotivo'] },
  MDFeConsulta: { fields: ['tpAmb', 'verAplic', 'cStat', 'xMotivo', 'cUF'] },
  MDFeConsNaoEnc: { fields: ['tpAmb', 'verAplic', 'cStat', 'xMotivo', 'cUF'] },
  MDFeStatusServico: { fields: ['tpAmb', 'verAplic', 'cStat', 'xMotivo', 'cUF', 'dhRecbto'] },
};

/** A ret* element that only carries the common fields: how every rejection of a message looks. */
export function plainAnswer(service: ServiceName, c: Common, extra: { nRec?: string; chNFe?: string; idLote?: string } = {}): string {
  const values: Record<PlainField, string> = {
    tpAmb: c.tpAmb,
    verAplic: c.verAplic,
    cStat: c.cStat,
    xMotivo: c.xMotivo,
    cUF: c.cUF,
    cOrgao: c.cUF,
    dhRecbto: brasiliaDateTime(c.at ?? new Date()),
    // The schemas require these; a message too broken to carry them gets zeros.
    nRec: extra.nRec ?? '000000000000000',
    chNFe: extra.chNFe ?? '0'.repeat(44),
    idLote: extra.idLote ?? '0',
  };
  const { fields, wrap } = PLAIN_LAYOUTS[service];
  const body = fields.map((f) => t(f, values[f])).join('');
  return root(service, ` versao="${layoutVersion(service)}"`, wrap ? `<${wrap}>${body}</${wrap}>` : body);
}

export function retEnviNFe(c: Common, then: { protNFe?: string; infRec?: { nRec: string; tMed: number } }): string {
  const body =
    t('tpAmb', c.tpAmb) +
    t('verAplic', c.verAplic) +
    t('cStat', c.cStat) +
    t('xMotivo', c.xMotivo) +
    t('cUF', c.cUF) +
    t('dhRecbto', brasiliaDateTime(c.at ?? new Date())) +
    (then.infRec ? `<infRec>${t('nRec', then.infRec.nRec)}${t('tMed', String(then.infRec.tMed))}</infRec>` : (then.protNFe ?? ''));
  return root('NFeAutorizacao4', ' versao="4.00"', body);
}

export function retConsReciNFe(c: Common, nRec: string, protNFe?: string): string {
  const body =
    t('tpAmb', c.tpAmb) +
    t('verAplic', c.verAplic) +
    t('nRec', nRec) +
    t('cStat', c.cStat) +
    t('xMotivo', c.xMotivo) +
    t('cUF', c.cUF) +
    t('dhRecbto', brasiliaDateTime(c.at ?? new Date())) +
    (protNFe ?? '');
  return root('NFeRetAutorizacao4', ' versao="4.00"', body);
}

export function retConsSitNFe(c: Common, chNFe: string, protNFe?: string): string {
  const body =
    t('tpAmb', c.tpAmb) +
    t('verAplic', c.verAplic) +
    t('cStat', c.cStat) +
    t('xMotivo', c.xMotivo) +
    t('cUF', c.cUF) +
    t('dhRecbto', brasiliaDateTime(c.at ?? new Date())) +
    t('chNFe', chNFe) +
    (protNFe ?? '');
  return root('NFeConsultaProtocolo4', ' versao="4.00"', body);
}

export function retConsStatServ(service: 'NFeStatusServico4' | 'MDFeStatusServico', c: Common, tMed: number): string {
  const body =
    t('tpAmb', c.tpAmb) +
    t('verAplic', c.verAplic) +
    t('cStat', c.cStat) +
    t('xMotivo', c.xMotivo) +
    t('cUF', c.cUF) +
    t('dhRecbto', brasiliaDateTime(c.at ?? new Date())) +
    t('tMed', String(tMed));
  return root(service, ` versao="${layoutVersion(service)}"`, body);
}

export function retEnvEvento(c: Common, idLote: string, retEvento: string): string {
  const body =
    t('idLote', idLote) + t('tpAmb', c.tpAmb) + t('verAplic', c.verAplic) + t('cOrgao', c.cUF) + t('cStat', c.cStat) + t('xMotivo', c.xMotivo) + retEvento;
  return root('NFeRecepcaoEvento4', ' versao="1.00"', body);
}

export function retMDFe(c: Common, protMDFe?: string): string {
  const body = t('tpAmb', c.tpAmb) + t('cUF', c.cUF) + t('verAplic', c.verAplic) + t('cStat', c.cStat) + t('xMotivo', c.xMotivo) + (protMDFe ?? '');
  return root('MDFeRecepcaoSinc', ' versao="3.00"', body);
}

export function retConsSitMDFe(c: Common, protMDFe?: string): string {
  const body = t('tpAmb', c.tpAmb) + t('verAplic', c.verAplic) + t('cStat', c.cStat) + t('xMotivo', c.xMotivo) + t('cUF', c.cUF) + (protMDFe ?? '');
  return root('MDFeConsulta', ' versao="3.00"', body);
}

export function retConsMDFeNaoEnc(c: Common, open: readonly { chMDFe: string; nProt: string }[]): string {
  const body =
    t('tpAmb', c.tpAmb) +
    t('verAplic', c.verAplic) +
    t('cStat', c.cStat) +
    t('xMotivo', c.xMotivo) +
    t('cUF', c.cUF) +
    open.map((m) => `<infMDFe>${t('chMDFe', m.chMDFe)}${t('nProt', m.nProt)}</infMDFe>`).join('');
  return root('MDFeConsNaoEnc', ' versao="3.00"', body);
}

/** An answer element the rule book wrote without a namespace (retInutNFe, retEventoMDFe), given its own. */
export function withNamespace(element: string, service: ServiceName): string {
  const ns = payloadNamespace(SERVICES[service].family);
  return element.replace(/^<([A-Za-z]+)(?=[\s>])/, `<$1 xmlns="${ns}"`);
}
