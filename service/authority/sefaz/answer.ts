// Reading SEFAZ's answers. Authorizers write the same answer with different envelope prefixes
// (`soap:` on the .asmx hosts, `env:` in GO, `S:` on the Java hosts, sometimes extra prefixes for
// the payload), so everything here goes by namespace URI and local name, never by prefix, through
// a real namespace-aware parser (@xmldom/xmldom).
//
// Elements that are kept (protNFe for nfeProc, retEvento for procEventoNFe, …) are written back
// compact and unprefixed, in the form the fiscal wrappers embed: the namespace of the payload is
// inherited from the wrapper, so it is declared only where an element leaves it (a Signature).

import { DOMParser } from '@xmldom/xmldom';
import { escapeXml } from '../../../fiscal/xml.ts';
import { answerWrapper, payloadNamespace, SERVICES, SOAP12_NS, wsdlNamespace, type ServiceName } from './services.ts';

// SOAP 1.1 envelopes are read too: a server that answers in 1.1 still says what it means.
const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
const ELEMENT_NODE = 1;
const TEXT_NODE = 3;
const CDATA_SECTION_NODE = 4;

// The DOM types of xmldom, reduced to what is read here.
export type XmlNode = {
  nodeType: number;
  nodeValue: string | null;
  childNodes: ArrayLike<XmlNode>;
};
export type XmlElement = XmlNode & {
  localName: string;
  namespaceURI: string | null;
  attributes: ArrayLike<{ name: string; value: string; prefix?: string | null; namespaceURI?: string | null }>;
};

/** The answer was not a SOAP answer we can read: the outcome of the call is unknown. */
export class AnswerFormatError extends Error {
  override name = 'AnswerFormatError';
}

/** The server answered with a SOAP Fault (HTTP 500 in SOAP 1.2): nothing was processed. */
export class SoapFaultError extends Error {
  override name = 'SoapFaultError';
  constructor(
    readonly code: string,
    readonly reason: string,
  ) {
    super(`SOAP Fault ${code}: ${reason}`);
  }
}

/** Parses XML; a malformed document is an AnswerFormatError naming the problem. */
export function parseXml(text: string): XmlElement {
  let problem: string | undefined;
  const parser = new DOMParser({
    locator: {},
    errorHandler: {
      warning: () => undefined,
      error: (msg: string) => (problem ??= msg),
      fatalError: (msg: string) => (problem ??= msg),
    },
  });
  let doc;
  try {
    doc = parser.parseFromString(text, 'text/xml');
  } catch (err) {
    throw new AnswerFormatError(`resposta não é XML: ${(err as Error).message}`);
  }
  const root = doc?.documentElement as unknown as XmlElement | null;
  if (problem || !root) throw new AnswerFormatError(`resposta não é XML: ${String(problem ?? 'documento vazio').trim()}`);
  return root;
}

export function elements(parent: XmlNode): XmlElement[] {
  const out: XmlElement[] = [];
  for (let i = 0; i < parent.childNodes.length; i++) {
    const n = parent.childNodes[i]!;
    if (n.nodeType === ELEMENT_NODE) out.push(n as XmlElement);
  }
  return out;
}

/** The first child element `{ns}name`. */
export function child(parent: XmlNode, ns: string, name: string): XmlElement | undefined {
  return elements(parent).find((e) => e.localName === name && e.namespaceURI === ns);
}

export function childrenNamed(parent: XmlNode, ns: string, name: string): XmlElement[] {
  return elements(parent).filter((e) => e.localName === name && e.namespaceURI === ns);
}

export function textOf(node: XmlNode): string {
  let out = '';
  for (let i = 0; i < node.childNodes.length; i++) {
    const n = node.childNodes[i]!;
    if (n.nodeType === TEXT_NODE || n.nodeType === CDATA_SECTION_NODE) out += n.nodeValue ?? '';
    else if (n.nodeType === ELEMENT_NODE) out += textOf(n);
  }
  return out;
}

/** Text of the child `{ns}name`, trimmed; undefined when absent. */
export function childText(parent: XmlNode, ns: string, name: string): string | undefined {
  const c = child(parent, ns, name);
  return c ? textOf(c).trim() : undefined;
}

/**
 * Writes an element compact and unprefixed. `inherited`: the default namespace in force where
 * it will be embedded; an element in another namespace declares its own.
 */
export function serialize(el: XmlElement, inherited: string | null): string {
  const ns = el.namespaceURI;
  let open = `<${el.localName}`;
  if (ns !== inherited) open += ` xmlns="${escapeXml(ns ?? '')}"`;
  for (let i = 0; i < el.attributes.length; i++) {
    const a = el.attributes[i]!;
    if (a.name === 'xmlns' || a.name.startsWith('xmlns:') || a.prefix) continue;
    open += ` ${a.name}="${escapeXml(a.value)}"`;
  }
  let body = '';
  for (let i = 0; i < el.childNodes.length; i++) {
    const n = el.childNodes[i]!;
    if (n.nodeType === ELEMENT_NODE) body += serialize(n as XmlElement, ns);
    else if (n.nodeType === TEXT_NODE || n.nodeType === CDATA_SECTION_NODE) {
      const value = n.nodeValue ?? '';
      // Indentation between elements is not content: the fiscal layouts are compact.
      if (value.trim() !== '' || elements(el).length === 0) body += escapeXml(value);
    }
  }
  return `${open}>${body}</${el.localName}>`;
}

/** The SOAP Body of an envelope (1.2, or 1.1 if a server answered so), after checking for a Fault. */
export function soapBody(root: XmlElement): XmlElement {
  const envNs = root.namespaceURI;
  if (root.localName !== 'Envelope' || (envNs !== SOAP12_NS && envNs !== SOAP11_NS)) {
    throw new AnswerFormatError(`resposta sem envelope SOAP (raiz {${envNs ?? ''}}${root.localName})`);
  }
  const body = child(root, envNs, 'Body');
  if (!body) throw new AnswerFormatError('envelope SOAP sem Body');
  const fault = child(body, envNs, 'Fault');
  if (fault) throw faultOf(fault, envNs);
  return body;
}

function faultOf(fault: XmlElement, envNs: string): SoapFaultError {
  if (envNs === SOAP12_NS) {
    const code = child(fault, envNs, 'Code');
    const value = code && childText(code, envNs, 'Value');
    const reason = child(fault, envNs, 'Reason');
    const text = reason && elements(reason).map(textOf).join(' ').trim();
    return new SoapFaultError(value ?? 'Fault', text || 'sem motivo');
  }
  return new SoapFaultError(
    textOf(elements(fault).find((e) => e.localName === 'faultcode') ?? fault).trim(),
    textOf(elements(fault).find((e) => e.localName === 'faultstring') ?? fault).trim(),
  );
}

/**
 * The answer of `service` in a SOAP response: the ret* element (retEnviNFe, retMDFe, …), found
 * by namespace inside the result wrapper of the service's WSDL namespace. A Fault throws
 * SoapFaultError; anything else unexpected, AnswerFormatError.
 */
export function readAnswer(service: ServiceName, text: string): XmlElement {
  const body = soapBody(parseXml(text));
  const wrapperName = answerWrapper(service);
  const wrapper = child(body, wsdlNamespace(service), wrapperName);
  if (!wrapper) {
    const found =
      elements(body)
        .map((e) => `{${e.namespaceURI ?? ''}}${e.localName}`)
        .join(', ') || 'nada';
    throw new AnswerFormatError(`resposta de ${service} sem {${wsdlNamespace(service)}}${wrapperName} (encontrado: ${found})`);
  }
  const expected = SERVICES[service].answer;
  const answer = child(wrapper, payloadNamespace(SERVICES[service].family), expected);
  if (!answer) throw new AnswerFormatError(`resposta de ${service} sem o elemento ${expected}`);
  return answer;
}
