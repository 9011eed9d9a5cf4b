// The SEFAZ web services Balcão talks to, as their WSDLs declare them: the WSDL namespace (which
// is also the SOAP action's prefix and the namespace of the body wrapper), the operation, the
// root of the message carried in the body and of the answer, and whether the MDF-e header
// (mdfeCabecMsg) goes with it. Shared by the connector (what to send) and the simulator (what to
// expect), so the two cannot drift apart.
//
// - NF-e/NFC-e 4.00: body `nfeDadosMsg`, answer `nfeResultMsg`, no SOAP header (NT 2016.002
//   removed nfeCabecMsg; sending it makes some authorizers fail).
// - MDF-e 3.00: body `mdfeDadosMsg`, answer `<operation>Result`, `mdfeCabecMsg` in the SOAP header
//   of every service but MDFeRecepcaoSinc (its WSDL declares none; SVRS tolerates one).
//   MDFeRecepcaoSinc carries base64(gzip(signed MDFe)) as text, not XML.

import type { SchemaName } from '../../../fiscal/schema.ts';

export const SOAP12_NS = 'http://www.w3.org/2003/05/soap-envelope';
export const NFE_NS = 'http://www.portalfiscal.inf.br/nfe';
export const MDFE_NS = 'http://www.portalfiscal.inf.br/mdfe';

export type Family = 'nfe' | 'mdfe';

export type NfeServiceName =
  'NFeAutorizacao4' | 'NFeRetAutorizacao4' | 'NFeConsultaProtocolo4' | 'NFeStatusServico4' | 'NFeRecepcaoEvento4' | 'NFeInutilizacao4';

export type MdfeServiceName = 'MDFeRecepcaoSinc' | 'MDFeRecepcaoEvento' | 'MDFeConsulta' | 'MDFeStatusServico' | 'MDFeConsNaoEnc';

export type ServiceName = NfeServiceName | MdfeServiceName;

export type ServiceSpec = {
  family: Family;
  operation: string;
  /** Root element of the message in the body (for MDFeRecepcaoSinc: of the gzipped document). */
  request: string;
  /** The schemas the message may be validated against (events: chosen by tpEvento). */
  requestSchemas: readonly SchemaName[];
  /** Root element of the answer. */
  answer: string;
  /** MDF-e: mdfeCabecMsg in the SOAP header. */
  header: boolean;
  /** MDFeRecepcaoSinc: the body is base64(gzip(document)). */
  gzip: boolean;
};

export const SERVICES: Readonly<Record<ServiceName, ServiceSpec>> = {
  NFeAutorizacao4: {
    family: 'nfe',
    operation: 'nfeAutorizacaoLote',
    request: 'enviNFe',
    requestSchemas: ['enviNFe'],
    answer: 'retEnviNFe',
    header: false,
    gzip: false,
  },
  NFeRetAutorizacao4: {
    family: 'nfe',
    operation: 'nfeRetAutorizacaoLote',
    request: 'consReciNFe',
    requestSchemas: ['consReciNFe'],
    answer: 'retConsReciNFe',
    header: false,
    gzip: false,
  },
  NFeConsultaProtocolo4: {
    family: 'nfe',
    operation: 'nfeConsultaNF',
    request: 'consSitNFe',
    requestSchemas: ['consSitNFe'],
    answer: 'retConsSitNFe',
    header: false,
    gzip: false,
  },
  NFeStatusServico4: {
    family: 'nfe',
    operation: 'nfeStatusServicoNF',
    request: 'consStatServ',
    requestSchemas: ['consStatServ'],
    answer: 'retConsStatServ',
    header: false,
    gzip: false,
  },
  NFeRecepcaoEvento4: {
    family: 'nfe',
    operation: 'nfeRecepcaoEvento',
    request: 'envEvento',
    requestSchemas: ['envEventoCancNFe', 'envEventoCancSubst'],
    answer: 'retEnvEvento',
    header: false,
    gzip: false,
  },
  NFeInutilizacao4: {
    family: 'nfe',
    operation: 'nfeInutilizacaoNF',
    request: 'inutNFe',
    requestSchemas: ['inutNFe'],
    answer: 'retInutNFe',
    header: false,
    gzip: false,
  },
  MDFeRecepcaoSinc: { family: 'mdfe', operation: 'mdfeRecepcao', request: 'MDFe', requestSchemas: ['mdfe'], answer: 'retMDFe', header: false, gzip: true },
  MDFeRecepcaoEvento: {
    family: 'mdfe',
    operation: 'mdfeRecepcaoEvento',
    request: 'eventoMDFe',
    requestSchemas: ['eventoMDFe'],
    answer: 'retEventoMDFe',
    header: true,
    gzip: false,
  },
  MDFeConsulta: {
    family: 'mdfe',
    operation: 'mdfeConsultaMDF',
    request: 'consSitMDFe',
    requestSchemas: ['consSitMDFe'],
    answer: 'retConsSitMDFe',
    header: true,
    gzip: false,
  },
  MDFeStatusServico: {
    family: 'mdfe',
    operation: 'mdfeStatusServicoMDF',
    request: 'consStatServMDFe',
    requestSchemas: ['consStatServMDFe'],
    answer: 'retConsStatServMDFe',
    header: true,
    gzip: false,
  },
  MDFeConsNaoEnc: {
    family: 'mdfe',
    operation: 'mdfeConsNaoEnc',
    request: 'consMDFeNaoEnc',
    requestSchemas: ['consMDFeNaoEnc'],
    answer: 'retConsMDFeNaoEnc',
    header: true,
    gzip: false,
  },
};

export const serviceNames = Object.keys(SERVICES) as ServiceName[];

/** `http://www.portalfiscal.inf.br/nfe/wsdl/NFeAutorizacao4`: the WSDL's target namespace. */
export const wsdlNamespace = (service: ServiceName): string => `${SERVICES[service].family === 'nfe' ? NFE_NS : MDFE_NS}/wsdl/${service}`;

/** The SOAP action (`<namespace>/<operation>`), carried in the Content-Type's action parameter. */
export const soapAction = (service: ServiceName): string => `${wsdlNamespace(service)}/${SERVICES[service].operation}`;

/** The namespace of the fiscal messages of a family. */
export const payloadNamespace = (family: Family): string => (family === 'nfe' ? NFE_NS : MDFE_NS);

/** The element that wraps the message in the request body. */
export const requestWrapper = (service: ServiceName): string => (SERVICES[service].family === 'nfe' ? 'nfeDadosMsg' : 'mdfeDadosMsg');

/** The element that wraps the answer in the response body. */
export const answerWrapper = (service: ServiceName): string => (SERVICES[service].family === 'nfe' ? 'nfeResultMsg' : `${SERVICES[service].operation}Result`);

/** The version of the message layout (`versao`, and versaoDados of mdfeCabecMsg). */
export const layoutVersion = (service: ServiceName): string =>
  service === 'NFeRecepcaoEvento4' ? '1.00' : SERVICES[service].family === 'nfe' ? '4.00' : '3.00';
