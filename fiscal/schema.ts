// XSD validation of our fiscal XML against the official schemas in `fiscal/schemas/`.
//
// Why libxml2-wasm: the schemas are the authority SEFAZ applies, and libxml2 is the reference
// implementation the upstream projects (and our fixture README, via xmllint) check them with.
// The WebAssembly build runs in-process: no JDK, no xmllint binary and no native addon that has
// to match the user's Node/Electron ABI, libc or CPU, so the point of sale on a shop PC and the
// service in a container validate the same way with nothing extra installed. Being in-process
// also matters for speed: the NF-e schema set takes tens of milliseconds to compile, so it is
// compiled once and reused; spawning a validator per document would pay that every time.
//
// Notes that shape the code below:
// - The schemas are read from `fiscal/schemas/` (its README says where each package comes from).
//   libxml2 loads xs:include/xs:import through I/O callbacks; we register one input provider that only serves
//   `.xsd` files under the two schema folders, so no parsed document can make libxml2 read any
//   other file. Registration is process-wide: do not call `xmlCleanupInputProvider()` elsewhere,
//   or schemas not compiled yet will fail to load their includes.
// - Documents with a DOCTYPE are refused: fiscal XML has none, external entities must not be
//   loaded, and libxml2's validator fails with an internal error on unexpanded entity references.
// - A schema accepts any of its global elements as the document root (the NF-e set also declares
//   ds:Signature, for instance), so we check the root element against the one we expect.
// - MDF-e events carry `detEvento` as xs:any processContents="skip": eventoMDFe alone accepts
//   anything there. The content is validated in place against evCancMDFe / evEncMDFe /
//   evIncCondutorMDFe / evIncDFeMDFe, chosen by tpEvento, so one call checks the whole event
//   (and line numbers still refer to the document).
//   NF-e events need no such step: envEventoCancNFe / envEventoCancSubst (and their evento /
//   procEventoNFe variants) type detEvento fully.
// - The MDF-e's infModal is xs:any too: the road modal (`rodo`) is validated in place against
//   mdfeModalRodoviario the same way, for MDFe and mdfeProc. We issue road manifests only; any
//   other modal is reported rather than passed unchecked.
// - Parsed documents live in WebAssembly memory that the JS garbage collector does not see; every
//   XmlDocument is disposed in a `finally`, so a long-running service does not grow. Compiled
//   validators (and the schema documents they point into) are kept for the life of the process.

import { existsSync, readFileSync } from 'node:fs';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ParseOption,
  XmlDocument,
  XmlElement,
  XmlError,
  XmlLibError,
  XmlValidateError,
  XsdValidator,
  xmlRegisterInputProvider,
  type ErrorDetail,
  type XmlInputProvider,
} from 'libxml2-wasm';

// The packages, next to this module in the checkout and in the packaged app alike.
const xsdDir = {
  nfe: fileURLToPath(new URL('./schemas/nfe/PL_010_V1.30/', import.meta.url)),
  mdfe: fileURLToPath(new URL('./schemas/mdfe/PL_MDFe_300a/', import.meta.url)),
};

const NS_NFE = 'http://www.portalfiscal.inf.br/nfe';
const NS_MDFE = 'http://www.portalfiscal.inf.br/mdfe';

type SchemaSpec = { pkg: 'nfe' | 'mdfe'; file: string; root: string };

const SCHEMAS = {
  // NFC-e (model 65) document, and the document with its authorization protocol.
  nfe: { pkg: 'nfe', file: 'nfe_v4.00.xsd', root: 'NFe' },
  procNFe: { pkg: 'nfe', file: 'procNFe_v4.00.xsd', root: 'nfeProc' },
  // Event 110111 Cancelamento: the batch sent to SEFAZ, a single event, the event with its answer.
  envEventoCancNFe: { pkg: 'nfe', file: 'envEventoCancNFe_v1.00.xsd', root: 'envEvento' },
  eventoCancNFe: { pkg: 'nfe', file: 'eventoCancNFe_v1.00.xsd', root: 'evento' },
  procEventoCancNFe: { pkg: 'nfe', file: 'procEventoCancNFe_v1.00.xsd', root: 'procEventoNFe' },
  // Event 110112 Cancelamento por substituição (NFC-e), same three shapes.
  envEventoCancSubst: { pkg: 'nfe', file: 'envEventoCancSubst_v1.00.xsd', root: 'envEvento' },
  eventoCancSubst: { pkg: 'nfe', file: 'eventoCancSubst_v1.00.xsd', root: 'evento' },
  procEventoCancSubst: { pkg: 'nfe', file: 'procEventoCancSubst_v1.00.xsd', root: 'procEventoNFe' },
  // Inutilização of a number range, and with its answer (root is capitalised in the layout).
  inutNFe: { pkg: 'nfe', file: 'inutNFe_v4.00.xsd', root: 'inutNFe' },
  procInutNFe: { pkg: 'nfe', file: 'procInutNFe_v4.00.xsd', root: 'ProcInutNFe' },
  // MDF-e (model 58).
  mdfe: { pkg: 'mdfe', file: 'mdfe_v3.00.xsd', root: 'MDFe' },
  procMDFe: { pkg: 'mdfe', file: 'procMDFe_v3.00.xsd', root: 'mdfeProc' },
  eventoMDFe: { pkg: 'mdfe', file: 'eventoMDFe_v3.00.xsd', root: 'eventoMDFe' },
  procEventoMDFe: { pkg: 'mdfe', file: 'procEventoMDFe_v3.00.xsd', root: 'procEventoMDFe' },
  // detEvento content of the MDF-e events (also usable on their own).
  evCancMDFe: { pkg: 'mdfe', file: 'evCancMDFe_v3.00.xsd', root: 'evCancMDFe' },
  evEncMDFe: { pkg: 'mdfe', file: 'evEncMDFe_v3.00.xsd', root: 'evEncMDFe' },
  evIncCondutorMDFe: { pkg: 'mdfe', file: 'evIncCondutorMDFe_v3.00.xsd', root: 'evIncCondutorMDFe' },
  // The file is named evInclusaoDFeMDFe; the element it declares, evIncDFeMDFe.
  evIncDFeMDFe: { pkg: 'mdfe', file: 'evInclusaoDFeMDFe_v3.00.xsd', root: 'evIncDFeMDFe' },
  // infModal content of a road manifest (also usable on its own).
  rodo: { pkg: 'mdfe', file: 'mdfeModalRodoviario_v3.00.xsd', root: 'rodo' },
  // The messages of the NF-e/NFC-e web services (the body of each SOAP request) and their answers.
  enviNFe: { pkg: 'nfe', file: 'enviNFe_v4.00.xsd', root: 'enviNFe' },
  retEnviNFe: { pkg: 'nfe', file: 'retEnviNFe_v4.00.xsd', root: 'retEnviNFe' },
  consReciNFe: { pkg: 'nfe', file: 'consReciNFe_v4.00.xsd', root: 'consReciNFe' },
  retConsReciNFe: { pkg: 'nfe', file: 'retConsReciNFe_v4.00.xsd', root: 'retConsReciNFe' },
  consSitNFe: { pkg: 'nfe', file: 'consSitNFe_v4.00.xsd', root: 'consSitNFe' },
  retConsSitNFe: { pkg: 'nfe', file: 'retConsSitNFe_v4.00.xsd', root: 'retConsSitNFe' },
  consStatServ: { pkg: 'nfe', file: 'consStatServ_v4.00.xsd', root: 'consStatServ' },
  retConsStatServ: { pkg: 'nfe', file: 'retConsStatServ_v4.00.xsd', root: 'retConsStatServ' },
  // envEvento with any detEvento (the generic layout); the cancellation batches above type it fully.
  envEvento: { pkg: 'nfe', file: 'envEvento_v1.00.xsd', root: 'envEvento' },
  retEnvEvento: { pkg: 'nfe', file: 'retEnvEvento_v1.00.xsd', root: 'retEnvEvento' },
  retInutNFe: { pkg: 'nfe', file: 'retInutNFe_v4.00.xsd', root: 'retInutNFe' },
  // The messages of the MDF-e web services. MDFeRecepcaoSinc carries the MDFe itself (gzip +
  // base64), so `mdfe` is its request schema; the asynchronous enviMDFe/consReciMDFe pair is
  // listed for the simulator, which answers it as SEFAZ does since NT 2024.001 (996).
  retMDFe: { pkg: 'mdfe', file: 'retMDFe_v3.00.xsd', root: 'retMDFe' },
  retEventoMDFe: { pkg: 'mdfe', file: 'retEventoMDFe_v3.00.xsd', root: 'retEventoMDFe' },
  consSitMDFe: { pkg: 'mdfe', file: 'consSitMDFe_v3.00.xsd', root: 'consSitMDFe' },
  retConsSitMDFe: { pkg: 'mdfe', file: 'retConsSitMDFe_v3.00.xsd', root: 'retConsSitMDFe' },
  consStatServMDFe: { pkg: 'mdfe', file: 'consStatServMDFe_v3.00.xsd', root: 'consStatServMDFe' },
  retConsStatServMDFe: { pkg: 'mdfe', file: 'retConsStatServMDFe_v3.00.xsd', root: 'retConsStatServMDFe' },
  consMDFeNaoEnc: { pkg: 'mdfe', file: 'consMDFeNaoEnc_v3.00.xsd', root: 'consMDFeNaoEnc' },
  retConsMDFeNaoEnc: { pkg: 'mdfe', file: 'retConsMDFeNaoEnc_v3.00.xsd', root: 'retConsMDFeNaoEnc' },
  enviMDFe: { pkg: 'mdfe', file: 'enviMDFe_v3.00.xsd', root: 'enviMDFe' },
  retEnviMDFe: { pkg: 'mdfe', file: 'retEnviMDFe_v3.00.xsd', root: 'retEnviMDFe' },
  consReciMDFe: { pkg: 'mdfe', file: 'consReciMDFe_v3.00.xsd', root: 'consReciMDFe' },
  retConsReciMDFe: { pkg: 'mdfe', file: 'retConsReciMDFe_v3.00.xsd', root: 'retConsReciMDFe' },
} as const satisfies Record<string, SchemaSpec>;

export type SchemaName = keyof typeof SCHEMAS;

export const schemaNames = Object.keys(SCHEMAS) as SchemaName[];

/** The official file a schema name stands for, e.g. `nfe_v4.00.xsd`. */
export function schemaFile(schema: SchemaName): string {
  return SCHEMAS[schema].file;
}

/** detEvento content schema per MDF-e tpEvento. Only the events we issue are mapped; any other
 * type is reported instead of passing unchecked. */
const MDFE_EVENT_CONTENT: Record<string, SchemaName> = {
  '110111': 'evCancMDFe',
  '110112': 'evEncMDFe',
  '110114': 'evIncCondutorMDFe',
  '110115': 'evIncDFeMDFe',
};

export type ValidationResult = { valid: boolean; errors: string[] };

export class SchemaError extends Error {
  readonly schema: SchemaName;
  readonly errors: string[];

  constructor(schema: SchemaName, errors: string[]) {
    super(`XML não confere com o schema ${SCHEMAS[schema].file}: ${errors[0] ?? 'erro não detalhado'}`);
    this.name = 'SchemaError';
    this.schema = schema;
    this.errors = errors;
  }
}

// Instance documents: no network, no external entities or DTDs (a document must not make us read
// anything), and the declared encoding is ignored because a JS string is already decoded; honouring
// `encoding="ISO-8859-1"` would decode the UTF-8 bytes of "ã" a second time into "Ã£".
const PARSE_OPTIONS = ParseOption.XML_PARSE_NONET | ParseOption.XML_PARSE_NO_XXE | ParseOption.XML_PARSE_IGNORE_ENC | ParseOption.XML_PARSE_BIG_LINES;

/**
 * Validates `xml` against `schema`. Never throws for a bad document: not well-formed XML, a wrong
 * root element or schema violations all come back as `valid: false` with libxml2's messages,
 * prefixed with the line (`linha 12: Element '{…}nNF': [facet 'pattern'] …`). Throws only when
 * the schemas themselves cannot be found or compiled (an installation problem).
 */
export function validateXml(xml: string, schema: SchemaName): ValidationResult {
  const spec = SCHEMAS[schema];
  const validator = compiled(schema);
  let doc: XmlDocument;
  try {
    doc = XmlDocument.fromString(xml, { option: PARSE_OPTIONS });
  } catch (err) {
    if (err instanceof XmlLibError) {
      return { valid: false, errors: describe(err.details, 'documento vazio ou ilegível', 'XML malformado: ') };
    }
    throw err;
  }
  try {
    // Fiscal XML never carries a DTD. Entity references it could declare are not expanded (and
    // external ones not loaded), and libxml2's validator fails internally on them instead of
    // answering, so the document is refused up front.
    if (doc.dtd) {
      return { valid: false, errors: ['XML com DOCTYPE não é aceito: documentos fiscais não usam DTD nem entidades'] };
    }
    const root = doc.root;
    const expectedNs = nsOf(spec.pkg);
    if (root.name !== spec.root || root.namespaceUri !== expectedNs) {
      return {
        valid: false,
        errors: [`linha ${root.line}: elemento raiz ${qname(root)} não é o esperado pelo schema ${spec.file} ({${expectedNs}}${spec.root})`],
      };
    }
    const errors = run(validator, doc);
    if (schema === 'eventoMDFe') errors.push(...mdfeEventContentErrors(root, errors.length > 0));
    if (schema === 'mdfe') errors.push(...mdfeModalErrors(root, errors.length > 0));
    if (schema === 'procMDFe') {
      const mdfe = child(root, 'MDFe');
      if (mdfe) errors.push(...mdfeModalErrors(mdfe, errors.length > 0));
    }
    if (schema === 'procEventoMDFe') {
      const evento = child(root, 'eventoMDFe');
      if (evento) errors.push(...mdfeEventContentErrors(evento, errors.length > 0));
    }
    return { valid: errors.length === 0, errors };
  } finally {
    doc.dispose();
  }
}

/** Compiles the given schemas now (all by default), so a service can pay the compile time
 * (tens of milliseconds for the NF-e and MDF-e documents) at start-up instead of on the first
 * request. Throws if a schema cannot be read or compiled. */
export function precompileSchemas(names: readonly SchemaName[] = schemaNames): void {
  for (const name of names) compiled(name);
}

/** Like validateXml, but throws SchemaError (first error in the message, all in `errors`). */
export function assertValidXml(xml: string, schema: SchemaName): void {
  const result = validateXml(xml, schema);
  if (!result.valid) throw new SchemaError(schema, result.errors);
}

/** Validates the detEvento content of one eventoMDFe element against the schema its tpEvento
 * selects. `outerFailed` says the event already has schema errors: then a missing part is not
 * reported again (the schema message already names it). */
function mdfeEventContentErrors(evento: XmlElement, outerFailed: boolean): string[] {
  const infEvento = child(evento, 'infEvento');
  const tpEvento = infEvento && child(infEvento, 'tpEvento');
  const detEvento = infEvento && child(infEvento, 'detEvento');
  if (!tpEvento || !detEvento) {
    return outerFailed ? [] : [`linha ${evento.line}: evento MDF-e sem tpEvento/detEvento; conteúdo não validado`];
  }
  const tp = tpEvento.content;
  const contentSchema = MDFE_EVENT_CONTENT[tp];
  if (!contentSchema) {
    return [
      `linha ${tpEvento.line}: tpEvento ${tp} sem schema de conteúdo conhecido (só ${Object.keys(MDFE_EVENT_CONTENT).join(', ')}); detEvento não validado`,
    ];
  }
  const spec = SCHEMAS[contentSchema];
  const prefix = `detEvento (${spec.file}): `;
  const content = firstElement(detEvento);
  if (!content) return outerFailed ? [] : [`${prefix}linha ${detEvento.line}: detEvento vazio`];
  if (content.name !== spec.root || content.namespaceUri !== NS_MDFE) {
    return [`${prefix}linha ${content.line}: tpEvento ${tp} pede {${NS_MDFE}}${spec.root} em detEvento, encontrado ${qname(content)}`];
  }
  return run(compiled(contentSchema), content).map((e) => prefix + e);
}

/** Validates the infModal content of one MDFe element against the road modal schema. */
function mdfeModalErrors(mdfe: XmlElement, outerFailed: boolean): string[] {
  const infMDFe = child(mdfe, 'infMDFe');
  const infModal = infMDFe && child(infMDFe, 'infModal');
  const content = infModal && firstElement(infModal);
  if (!content) return outerFailed ? [] : [`linha ${mdfe.line}: MDF-e sem infModal; modal não validado`];
  const spec = SCHEMAS.rodo;
  const prefix = `infModal (${spec.file}): `;
  if (content.name !== spec.root || content.namespaceUri !== NS_MDFE) {
    return [`${prefix}linha ${content.line}: modal ${qname(content)} não suportado (só o rodoviário, rodo)`];
  }
  return run(compiled('rodo'), content).map((e) => prefix + e);
}

function run(validator: XsdValidator, target: XmlDocument | XmlElement): string[] {
  try {
    // The overloads take a document or an element; both are the same call underneath.
    if (target instanceof XmlDocument) validator.validate(target);
    else validator.validate(target);
    return [];
  } catch (err) {
    if (err instanceof XmlValidateError) return describe(err.details, 'documento não confere com o schema');
    // libxml2 answers -1 ("internal error") for content it cannot judge; that is still a
    // document we must not accept, and validateXml promises not to throw for bad documents.
    if (err instanceof XmlError) return [`o validador não conseguiu processar o documento: ${err.message}`];
    throw err;
  }
}

function describe(details: ErrorDetail[], fallback: string, kind = ''): string[] {
  const errors = details
    .filter((d) => d.level >= 2) // warnings do not make a document invalid
    .map((d) => (d.line > 0 ? `linha ${d.line}: ` : '') + kind + d.message.trim());
  return errors.length > 0 ? errors : [kind + fallback];
}

// ---------------------------------------------------------------------------------------------
// Compilation and the cache

const cache = new Map<SchemaName, XsdValidator>();
// The parsed schema documents stay alive with their validators: the compiled schema keeps
// pointers into the tree it was built from (annotations, for instance).
const schemaDocs: XmlDocument[] = [];

function compiled(schema: SchemaName): XsdValidator {
  const hit = cache.get(schema);
  if (hit) return hit;
  registerSchemaProvider();
  const spec = SCHEMAS[schema];
  const path = resolve(dirOf(spec.pkg), spec.file);
  let doc: XmlDocument;
  try {
    // The URL is the base libxml2 resolves xs:include/xs:import against.
    doc = XmlDocument.fromBuffer(readFileSync(path), { url: path });
  } catch (err) {
    throw new Error(`Não foi possível ler o schema ${path}: ${(err as Error).message.trim()}`, { cause: err });
  }
  let validator: XsdValidator;
  try {
    validator = XsdValidator.fromDoc(doc);
  } catch (err) {
    doc.dispose();
    throw new Error(`Não foi possível compilar o schema ${path}: ${(err as Error).message.trim()}`, { cause: err });
  }
  schemaDocs.push(doc);
  cache.set(schema, validator);
  return validator;
}

let providerRegistered = false;

/** Serves the includes/imports of the schemas, and nothing else, to libxml2. */
function registerSchemaProvider(): void {
  if (providerRegistered) return;
  const roots = [xsdDir.nfe, xsdDir.mdfe].map((d) => resolve(d) + sep);
  const open = new Map<number, { data: Buffer; pos: number }>();
  let nextFd = 1;
  const allowed = (filename: string): string | null => {
    let path: string;
    try {
      path = resolve(filename.startsWith('file:') ? fileURLToPath(filename) : filename);
    } catch {
      return null;
    }
    return extname(path) === '.xsd' && roots.some((r) => path.startsWith(r)) && existsSync(path) ? path : null;
  };
  const provider: XmlInputProvider = {
    match: (filename) => allowed(filename) !== null,
    open: (filename) => {
      const path = allowed(filename);
      if (!path) return undefined;
      try {
        const fd = nextFd++;
        open.set(fd, { data: readFileSync(path), pos: 0 });
        return fd;
      } catch {
        return undefined;
      }
    },
    read: (fd, buf) => {
      const file = open.get(fd);
      if (!file) return -1;
      const n = Math.min(buf.byteLength, file.data.length - file.pos);
      buf.set(file.data.subarray(file.pos, file.pos + n));
      file.pos += n;
      return n;
    },
    close: (fd) => open.delete(fd),
  };
  if (!xmlRegisterInputProvider(provider)) {
    throw new Error('Não foi possível registrar o leitor de schemas no libxml2 (tabela de callbacks cheia).');
  }
  providerRegistered = true;
}

// ---------------------------------------------------------------------------------------------
// Small tree helpers (a walk is cheaper than compiling XPath per document)

const nsOf = (pkg: SchemaSpec['pkg']): string => (pkg === 'nfe' ? NS_NFE : NS_MDFE);
const dirOf = (pkg: SchemaSpec['pkg']): string => xsdDir[pkg];

function qname(el: XmlElement): string {
  return el.namespaceUri ? `{${el.namespaceUri}}${el.name}` : el.name;
}

function* elements(parent: XmlElement): Generator<XmlElement> {
  for (let n = parent.firstChild; n; n = n.next) {
    if (n instanceof XmlElement) yield n;
  }
}

function firstElement(parent: XmlElement): XmlElement | undefined {
  for (const e of elements(parent)) return e;
  return undefined;
}

function child(parent: XmlElement, name: string): XmlElement | undefined {
  for (const e of elements(parent)) if (e.name === name && e.namespaceUri === parent.namespaceUri) return e;
  return undefined;
}
