// The central bank's API Pix document (openapi.yaml beside this file, release 2.9.0; README.md
// says where it comes from) as a validator: a request's path parameters, query and JSON body, and
// an answer's body, checked against the operation the document declares. Both sides use it: the
// terminal's PSP client before it sends, the PSP simulator on what it receives and answers, so
// neither can drift from the standard the real PSPs implement.
//
// The document is OpenAPI 3.0: its schemas are JSON Schema draft 4/5 with `nullable`, which Ajv's
// default (draft-07) dialect reads; unknown keywords (`example`, `title` texts) are ignored
// (strict off). The document is compiled once, whole, so its `$ref`s resolve inside it. Its
// `location` fields are declared `format: uri` yet specified and exemplified without a scheme
// (`pix.example.com/qr/v2/…`, the form the BR Code carries): `uri` is read as a URI reference.

import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

type Json = Record<string, unknown>;
type Parameter = { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema?: Json };
type Operation = { parameters?: (Parameter | { $ref: string })[]; requestBody?: Json; responses: Record<string, Json> };

/** The release of the document kept here (its `info.version`). */
export const PIX_API_RELEASE = '2.9.0';

const DOCUMENT_ID = 'https://balcao.local/pix-api/openapi.json';
export type PixMethod = 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';

export type PixRequest = {
  method: PixMethod;
  /** The path below the PSP's base URL, e.g. `/cob/abc…` (no query). */
  path: string;
  query?: Record<string, string>;
  body?: unknown;
};

/** A matched operation: its template (`/cob/{txid}`) and the path's parameter values. */
export type PixRoute = { template: string; method: PixMethod; params: Record<string, string> };

class PixApiDocument {
  readonly doc: Json & { info: { version: string }; paths: Record<string, Record<string, unknown>> };
  private readonly ajv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; regex: RegExp; names: string[] }[];

  constructor() {
    this.doc = parse(readFileSync(new URL('./openapi.yaml', import.meta.url), 'utf8')) as PixApiDocument['doc'];
    this.ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
    addFormats.default(this.ajv);
    this.ajv.addFormat('uri', this.ajv.formats['uri-reference']!);
    this.ajv.addSchema({ ...this.doc, $id: DOCUMENT_ID });
    // Literal segments first, so `/cob/{txid}` never swallows a longer literal path.
    this.templates = Object.keys(this.doc.paths)
      .map((template) => {
        const names: string[] = [];
        const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (_, name: string) => (names.push(name), '([^/]+)'));
        return { template, regex: new RegExp(`^${source}$`), names };
      })
      .sort((a, b) => a.names.length - b.names.length);
  }

  /** A validator for the schema at `pointer` (a JSON pointer into the document). */
  validator(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }

  errorsText(validate: ValidateFunction): string {
    return (validate.errors ?? []).map((e) => `${e.instancePath || '(valor)'} ${e.message ?? ''}`.trim()).join('; ');
  }

  /** The JSON pointer of an operation in the document. */
  pointer(route: PixRoute): string {
    return `/paths/${route.template.replace(/~/g, '~0').replace(/\//g, '~1')}/${route.method.toLowerCase()}`;
  }

  route(method: PixMethod, path: string): PixRoute | undefined {
    const lower = method.toLowerCase();
    for (const { template, regex, names } of this.templates) {
      const match = regex.exec(path);
      if (!match || !this.doc.paths[template]?.[lower]) continue;
      const params = Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(match[i + 1]!)]));
      return { template, method, params };
    }
    return undefined;
  }

  operation(route: PixRoute): Operation {
    return this.doc.paths[route.template]![route.method.toLowerCase()] as Operation;
  }

  /** Follows a local `$ref` (`#/components/…`) to what it names; anything else as it is. */
  deref<T>(node: T | { $ref: string }): { value: T; pointer?: string } {
    if (node && typeof node === 'object' && '$ref' in node && typeof node.$ref === 'string') {
      const pointer = node.$ref.replace(/^#/, '');
      let value: unknown = this.doc;
      for (const part of pointer.split('/').slice(1)) value = (value as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
      return { value: value as T, pointer };
    }
    return { value: node as T };
  }

  /** The path-level and operation-level parameters, each with the JSON pointer of its schema. */
  parameters(route: PixRoute): { parameter: Parameter; schemaPointer: string }[] {
    const operation = this.pointer(route);
    const out: { parameter: Parameter; schemaPointer: string }[] = [];
    const collect = (list: unknown, base: string) => {
      if (!Array.isArray(list)) return;
      list.forEach((entry: Parameter | { $ref: string }, i) => {
        const { value, pointer } = this.deref<Parameter>(entry);
        out.push({ parameter: value, schemaPointer: `${pointer ?? `${base}/${i}`}/schema` });
      });
    };
    collect(this.doc.paths[route.template]!.parameters, `${operation.slice(0, operation.lastIndexOf('/'))}/parameters`);
    collect(this.operation(route).parameters, `${operation}/parameters`);
    return out;
  }
}

let loaded: PixApiDocument | undefined;
/** The document, read and compiled on first use (a few hundred milliseconds, once per process). */
function pixApi(): PixApiDocument {
  return (loaded ??= new PixApiDocument());
}

/** The operation a method and path name in the API Pix, or undefined when the document has none. */
export function pixRoute(method: PixMethod, path: string): PixRoute | undefined {
  return pixApi().route(method, path);
}

/**
 * What is wrong with a request by the API Pix: an unknown operation, a path or query parameter
 * out of its schema, a required one missing, a body missing or out of its schema. Empty when
 * the request is valid. Messages in Portuguese, each naming the part.
 */
export function pixRequestProblems(request: PixRequest): string[] {
  const api = pixApi();
  const route = api.route(request.method, request.path);
  if (!route) return [`${request.method} ${request.path}: operação inexistente na API Pix ${PIX_API_RELEASE}`];
  const problems: string[] = [];
  for (const { parameter, schemaPointer } of api.parameters(route)) {
    if (parameter.in === 'header') continue;
    const value = parameter.in === 'path' ? route.params[parameter.name] : request.query?.[parameter.name];
    if (value === undefined) {
      if (parameter.required) problems.push(`parâmetro ${parameter.name} (${parameter.in}) obrigatório ausente`);
      continue;
    }
    const validate = api.validator(schemaPointer);
    // Query values travel as text: a boolean or integer parameter is checked as what it reads as.
    const typed =
      parameter.in === 'query' && /^(true|false)$/.test(value) ? value === 'true' : parameter.in === 'query' && /^\d+$/.test(value) ? Number(value) : value;
    if (!validate(typed) && !validate(value)) problems.push(`parâmetro ${parameter.name} (${parameter.in}) fora do esquema: ${api.errorsText(validate)}`);
  }
  const operation = api.operation(route);
  if (operation.requestBody) {
    const { value: body, pointer } = api.deref<{ required?: boolean; content?: Record<string, unknown> }>(operation.requestBody as Json);
    const bodyPointer = pointer ?? `${api.pointer(route)}/requestBody`;
    if (request.body === undefined) {
      if (body.required) problems.push('corpo da requisição obrigatório ausente');
    } else if (body.content?.['application/json']) {
      const validate = api.validator(`${bodyPointer}/content/application~1json/schema`);
      if (!validate(request.body)) problems.push(`corpo fora do esquema: ${api.errorsText(validate)}`);
    }
  } else if (request.body !== undefined) {
    problems.push('esta operação não leva corpo');
  }
  return problems;
}

/**
 * What is wrong with an answer by the API Pix: a status the operation does not declare, or a
 * JSON body out of the declared schema. Empty when the answer is valid.
 */
export function pixResponseProblems(route: PixRoute, status: number, body: unknown): string[] {
  const api = pixApi();
  const operation = api.operation(route);
  const declared = operation.responses[String(status)];
  if (!declared) return [`${route.method} ${route.template}: estado HTTP ${status} não declarado`];
  const { value: response, pointer } = api.deref<{ content?: Record<string, unknown> }>(declared);
  const base = pointer ?? `${api.pointer(route)}/responses/${status}`;
  const type = response.content && Object.keys(response.content)[0];
  if (!type) return [];
  const validate = api.validator(`${base}/content/${type.replace(/\//g, '~1')}/schema`);
  return validate(body) ? [] : [`resposta ${status} fora do esquema: ${api.errorsText(validate)}`];
}

/**
 * What is wrong with a `pix` webhook's body (the callback `POST {webhookUrl}/pix` of
 * `PUT /webhook/{chave}`, body `WebhookPixBody`) by the API Pix. The document's schema does not
 * require the list itself; a notification without one says nothing, so it is refused too.
 */
export function pixWebhookProblems(body: unknown): string[] {
  const api = pixApi();
  const validate = api.validator('/components/requestBodies/WebhookPixBody/content/application~1json/schema');
  if (!validate(body)) return [`corpo fora do esquema: ${api.errorsText(validate)}`];
  const list = (body as { pix?: unknown } | null)?.pix;
  return Array.isArray(list) && list.length > 0 ? [] : ['corpo sem a lista pix (ao menos um Pix)'];
}
