// A printer installed in the operating system: the receipt's ESC/POS goes as one raw job into a
// print queue, over IPP (RFC 8011), the protocol CUPS speaks natively and that a Windows print
// server offers with its Internet Printing role.
//
// Why IPP and not `lp -o raw`: IPP needs none of the CUPS client programs on the terminal, and
// it answers with the job's number and then its state, so a job is reported printed only once
// the queue says it was delivered (job-state "completed"), never because a command exited 0.
// The messages are encoded by the `ipp-encoder` package and carried by undici (HTTP, timeouts,
// TLS always verified).
//
// One job:
// 1. Get-Printer-Attributes: the queue must exist, be running and accept jobs; a stopped queue
//    would keep the job and print it whenever someone resumes it, long after the operator was
//    told it failed and reprinted, so it is refused before anything is queued.
// 2. Print-Job with the bytes, as `application/vnd.cups-raw` where the queue lists it (CUPS:
//    exactly what `lp -o raw` sends, so not even a queue with a driver filters them), otherwise
//    `application/octet-stream` (a Windows print server).
// 3. Get-Job-Attributes until the job is completed; canceled, aborted or stopped (the queue
//    stopped on a device error) is a failure; still not completed when the job's time budget is
//    over (jobBudgetMs) is a timeout. A failed or timed-out job is cancelled (Cancel-Job) so it
//    cannot come out later, unasked, after a reprint; when the server refuses to cancel it, the
//    operator's message says that the job is still in the queue.
//
// Where the queue is (the printer's address on the settings screen):
// - a bare queue name ("TM-T20", as `lpstat -p` lists it) is a queue of this computer's CUPS, at
//   localhost:631 (Linux and macOS);
// - an ipp:// or ipps:// URI (port 631 by default) is a queue on a CUPS server elsewhere, e.g.
//   ipp://servidor:631/printers/TM-T20;
// - an http:// or https:// URI is a Windows print server's queue,
//   http://servidor/printers/TM-T20/.printer.
//
// What was tested, and what was not: the whole path against Debian's CUPS 2.4 (a private cupsd
// with a raw queue whose device is the `socket` backend, i.e. an AppSocket/9100 printer; see
// test/helpers/cups-test-server.ts): bytes arrive identical, a missing queue, a stopped queue, cupsd down and
// a device that never answers each fail with their own message. macOS runs the same CUPS and
// the same IPP, but was not tried. The Windows print server was NOT tested: no Windows machine
// is available to this project. The four operations used are the ones every IPP/1.1 server
// must implement (RFC 8011, 5.2-5.3), but whether Windows hands an application/octet-stream job
// to the printer untouched (RAW), and reports its end as CUPS does, was not verified. The
// Windows spooler's own API (winspool) is not used: it needs a native module or a helper
// program, which could not be built or run here either.

import ippEncoder, { type IppRequest, type IppResponse } from 'ipp-encoder';
import { userInfo } from 'node:os';
import type { Agent } from 'undici';
import { jobBudgetMs, KEPT, PrinterError, type PrinterTransport } from './transports.ts';

type ConstantName =
  | 'PRINT_JOB'
  | 'CANCEL_JOB'
  | 'GET_JOB_ATTRIBUTES'
  | 'GET_PRINTER_ATTRIBUTES'
  | 'OPERATION_ATTRIBUTES_TAG'
  | 'JOB_ATTRIBUTES_TAG'
  | 'PRINTER_ATTRIBUTES_TAG'
  | 'INTEGER'
  | 'KEYWORD'
  | 'URI'
  | 'CHARSET'
  | 'NATURAL_LANG'
  | 'NAME_WITHOUT_LANG'
  | 'MIME_MEDIA_TYPE'
  | 'CLIENT_ERROR_FORBIDDEN'
  | 'CLIENT_ERROR_NOT_AUTHENTICATED'
  | 'CLIENT_ERROR_NOT_AUTHORIZED'
  | 'CLIENT_ERROR_NOT_POSSIBLE'
  | 'CLIENT_ERROR_NOT_FOUND'
  | 'CLIENT_ERROR_DOCUMENT_FORMAT_NOT_SUPPORTED'
  | 'SERVER_ERROR_NOT_ACCEPTING_JOBS';

const C = ippEncoder.CONSTANTS as Readonly<Record<ConstantName, number>>;

/** IPP job-state (RFC 8011, 5.3.7). */
export const JOB_STATE = { pending: 3, held: 4, processing: 5, stopped: 6, canceled: 7, aborted: 8, completed: 9 } as const;
const PRINTER_STOPPED = 5;

const RAW_CUPS = 'application/vnd.cups-raw';
const RAW_GENERIC = 'application/octet-stream';

/** CUPS' rule for queue names: printable, no space, slash, backslash, quote, question mark or hash. */
const QUEUE_NAME = /^[\x21-\x7e\u00a0-\uffff]{1,127}$/u;
const QUEUE_FORBIDDEN = /[/\\'"?#]/;

export type SystemQueueAddress = {
  /** Where the IPP request is POSTed (ipp → http, ipps → https, the port made explicit). */
  endpoint: URL;
  /** The printer-uri attribute of every request. */
  printerUri: string;
  /** How messages name the queue: `fila "TM-T20"`, or the URI. */
  description: string;
  /** The queue's name as typed, or the URI. */
  queue: string;
  /** A queue of this computer's CUPS. */
  local: boolean;
};

/**
 * The queue an address names, or undefined when it is neither a CUPS queue name nor an
 * ipp/ipps/http/https URI of a queue (with no user name, password, query or fragment).
 */
export function parseSystemQueue(address: string, localServer = 'localhost:631'): SystemQueueAddress | undefined {
  const text = address.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return undefined;
    }
    const scheme = url.protocol;
    if (!['ipp:', 'ipps:', 'http:', 'https:'].includes(scheme)) return undefined;
    if (!url.hostname || url.username || url.password || url.search || url.hash || url.pathname.length < 2) return undefined;
    const secure = scheme === 'ipps:' || scheme === 'https:';
    const defaultPort = scheme === 'ipp:' || scheme === 'ipps:' ? '631' : secure ? '443' : '80';
    const endpoint = new URL(`${secure ? 'https' : 'http'}://${url.host}${url.pathname}`);
    if (!endpoint.port) endpoint.port = defaultPort;
    return { endpoint, printerUri: url.href, description: url.href, queue: url.href, local: false };
  }
  if (!QUEUE_NAME.test(text) || QUEUE_FORBIDDEN.test(text) || Buffer.byteLength(text) > 127) return undefined;
  const path = `/printers/${encodeURIComponent(text)}`;
  return {
    endpoint: new URL(`http://${localServer}${path}`),
    printerUri: `ipp://${localServer}${path}`,
    description: `fila "${text}"`,
    queue: text,
    local: true,
  };
}

export type SystemQueuePrinterOptions = {
  /** A queue name of this computer's CUPS, or the queue's ipp://, ipps://, http:// or https:// URI. */
  address: string;
  /**
   * Limit for each exchange with the print server, and the base of the job's budget: the job
   * must be completed within timeoutMs plus jobBudgetMs' allowance for its size. Default 10 s.
   */
  timeoutMs?: number;
  /** How often the job's state is asked for while it prints (default 150 ms). */
  pollMs?: number;
  /** requesting-user-name, the job's owner (default: the operating system's user, as `lp` does). */
  userName?: string;
  /** This computer's CUPS, for bare queue names (default localhost:631; tests use their own). */
  localServer?: string;
};

type Attributes = Map<string, (string | number | boolean)[]>;
type Answer = { status: number; operation: Attributes; job: Attributes; printer: Attributes };

const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTDOWN', 'ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE']);
const TIMEOUT = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ABORT_ERR', 'UND_ERR_ABORTED']);
const CERTIFICATE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/;

function codesOf(err: unknown): string[] {
  const out: string[] = [];
  for (let e = err as { code?: unknown; name?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string') out.push(e.code);
    if (e.name === 'TimeoutError' || e.name === 'AbortError') out.push('ABORT_ERR');
  }
  return out;
}

function plain(v: unknown): string | number | boolean {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (v && typeof v === 'object' && 'value' in v) return String((v as { value: unknown }).value);
  return String(v);
}

function groupsOf(res: IppResponse): Answer {
  const answer: Answer = { status: res.statusCode, operation: new Map(), job: new Map(), printer: new Map() };
  for (const g of res.groups) {
    const target =
      g.tag === C.OPERATION_ATTRIBUTES_TAG
        ? answer.operation
        : g.tag === C.JOB_ATTRIBUTES_TAG
          ? answer.job
          : g.tag === C.PRINTER_ATTRIBUTES_TAG
            ? answer.printer
            : undefined;
    for (const a of g.attributes) target?.set(a.name, a.value.map(plain));
  }
  return answer;
}

const first = (attrs: Attributes, name: string): string | number | boolean | undefined => attrs.get(name)?.[0];
const text = (attrs: Attributes, name: string): string => {
  const v = first(attrs, name);
  return typeof v === 'string' ? v.trim() : '';
};
const keywords = (attrs: Attributes, name: string): string[] => (attrs.get(name) ?? []).map(String).filter((k) => k && k !== 'none');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let nextRequestId = 1;

export class SystemQueuePrinter implements PrinterTransport {
  readonly address: SystemQueueAddress;
  readonly description: string;
  readonly timeoutMs: number;
  readonly pollMs: number;
  readonly userName: string;
  #agent: Promise<Agent> | undefined;

  constructor(options: SystemQueuePrinterOptions) {
    const address = parseSystemQueue(options.address, options.localServer);
    if (!address) throw new PrinterError('desconhecido', options.address, undefined, { message: `Fila de impressão inválida: "${options.address}"; ${KEPT}` });
    this.address = address;
    this.description = address.description;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.pollMs = options.pollMs ?? 150;
    this.userName = options.userName ?? defaultUserName();
  }

  /** The connection pool, made at the first job: undici's import (~90 ms) is not paid at start. */
  private agent(): Promise<Agent> {
    // Short keep-alive: jobs are minutes apart, and an idle socket to the print server is no use.
    return (this.#agent ??= import('undici').then(
      ({ Agent }) => new Agent({ connect: { timeout: this.timeoutMs, rejectUnauthorized: true }, keepAliveTimeout: 2000, keepAliveMaxTimeout: 2000 }),
    ));
  }

  /** Where the server is, for messages: "localhost:631", "servidor:631". */
  private get server(): string {
    return this.address.endpoint.host;
  }

  private fail(code: PrinterError['code'], message: string, cause?: unknown): PrinterError {
    return new PrinterError(code, this.description, undefined, { message: `${message}; ${KEPT}`, cause });
  }

  /** One IPP operation; rejects with the operator's PrinterError for anything but an IPP answer. */
  async operation(
    operationId: number,
    attributes: IppRequest['groups'][number]['attributes'],
    data?: Uint8Array,
    deadline = Date.now() + this.timeoutMs,
  ): Promise<Answer> {
    const message: IppRequest = {
      // 1.1: what every IPP server speaks, Windows' included.
      version: { major: 1, minor: 1 },
      operationId,
      requestId: nextRequestId++,
      groups: [
        {
          tag: C.OPERATION_ATTRIBUTES_TAG,
          attributes: [
            { tag: C.CHARSET, name: 'attributes-charset', value: 'utf-8' },
            { tag: C.NATURAL_LANG, name: 'attributes-natural-language', value: 'pt-br' },
            { tag: C.URI, name: 'printer-uri', value: this.address.printerUri },
            { tag: C.NAME_WITHOUT_LANG, name: 'requesting-user-name', value: this.userName },
            ...attributes,
          ],
        },
      ],
    };
    const head = ippEncoder.request.encode(message);
    const body = data ? Buffer.concat([head, data]) : head;
    const limit = Math.max(1, Math.min(this.timeoutMs, deadline - Date.now()));
    let status: number;
    let payload: Buffer;
    try {
      const { request } = await import('undici');
      const res = await request(this.address.endpoint, {
        method: 'POST',
        dispatcher: await this.agent(),
        headers: { 'content-type': 'application/ipp', 'content-length': String(body.length) },
        body,
        signal: AbortSignal.timeout(limit),
        headersTimeout: limit,
        bodyTimeout: limit,
      });
      status = res.statusCode;
      payload = Buffer.from(await res.body.arrayBuffer());
    } catch (err) {
      throw this.transportError(err);
    }
    if (status === 401 || status === 403) {
      throw this.fail(
        'desconhecido',
        `O servidor de impressão ${this.server} pediu autenticação para a ${this.description} (HTTP ${status}), que o Balcão não usa. Libere a impressão sem senha para esta fila`,
      );
    }
    if (status === 404) throw this.missingQueue();
    if (status !== 200) throw this.fail('desconhecido', `O servidor de impressão ${this.server} respondeu HTTP ${status} à ${this.description}`);
    try {
      return groupsOf(ippEncoder.response.decode(payload));
    } catch (err) {
      throw this.fail('desconhecido', `Resposta do servidor de impressão ${this.server} não reconhecida (não é IPP)`, err);
    }
  }

  private transportError(err: unknown): PrinterError {
    const codes = codesOf(err);
    const cert = codes.find((c) => CERTIFICATE.test(c));
    if (cert) {
      return this.fail(
        'desconhecido',
        `Certificado do servidor de impressão ${this.server} não reconhecido (${cert}). Use ipp:// na rede da loja, ou dê ao servidor um certificado confiável`,
        err,
      );
    }
    if (codes.some((c) => TIMEOUT.has(c))) {
      return this.fail('timeout', `O servidor de impressão ${this.server} não respondeu a tempo (${this.description})`, err);
    }
    if (codes.some((c) => UNREACHABLE.has(c)) || codes.length === 0) {
      return this.address.local
        ? this.fail(
            'offline',
            `O serviço de impressão do sistema (CUPS) não respondeu em ${this.server} (${this.description}). Verifique se o CUPS está instalado e em execução`,
            err,
          )
        : this.fail('offline', `O servidor de impressão ${this.server} não respondeu (${this.description}). Verifique a rede e se o servidor está ligado`, err);
    }
    return this.fail('desconhecido', `Falha ao falar com o servidor de impressão ${this.server} (${codes[0]}: ${(err as Error).message})`, err);
  }

  private missingQueue(): PrinterError {
    return this.fail(
      'offline',
      this.address.local
        ? `Fila de impressão "${this.address.queue}" não encontrada no sistema (CUPS em ${this.server}). Confira o nome da fila em Configurações → Impressora (lpstat -p lista as filas)`
        : `Fila de impressão não encontrada em ${this.server} (${this.description}). Confira o endereço da fila em Configurações → Impressora`,
    );
  }

  /** An IPP error status as the operator's message (client-error-not-found: the queue is missing). */
  private statusError(answer: Answer, what: string): PrinterError {
    if (answer.status === C.CLIENT_ERROR_NOT_FOUND) return this.missingQueue();
    const detail = text(answer.operation, 'status-message') || ippEncoder.STATUS_CODES[answer.status] || `0x${answer.status.toString(16)}`;
    if (answer.status === C.CLIENT_ERROR_NOT_AUTHENTICATED || answer.status === C.CLIENT_ERROR_NOT_AUTHORIZED || answer.status === C.CLIENT_ERROR_FORBIDDEN) {
      return this.fail(
        'desconhecido',
        `O servidor de impressão recusou ${what} na ${this.description} (${detail}). Libere a impressão sem senha para esta fila`,
      );
    }
    if (answer.status === C.SERVER_ERROR_NOT_ACCEPTING_JOBS) {
      return this.fail('offline', `A ${this.description} não está aceitando trabalhos (${detail}). Libere a fila no sistema (no CUPS: cupsaccept)`);
    }
    if (answer.status === C.CLIENT_ERROR_DOCUMENT_FORMAT_NOT_SUPPORTED) {
      return this.fail('desconhecido', `A ${this.description} não aceita trabalhos brutos (raw), que é como o Balcão imprime (${detail})`);
    }
    return this.fail('desconhecido', `O servidor de impressão recusou ${what} na ${this.description} (${detail})`);
  }

  async send(bytes: Uint8Array): Promise<void> {
    const deadline = Date.now() + jobBudgetMs(this.timeoutMs, bytes.length);
    const queue = await this.operation(
      C.GET_PRINTER_ATTRIBUTES,
      [
        {
          tag: C.KEYWORD,
          name: 'requested-attributes',
          value: ['printer-state', 'printer-state-message', 'printer-state-reasons', 'printer-is-accepting-jobs', 'document-format-supported'],
        },
      ],
      undefined,
      deadline,
    );
    if (queue.status >= 0x0400) throw this.statusError(queue, 'a consulta');
    const stateMessage = text(queue.printer, 'printer-state-message');
    if (first(queue.printer, 'printer-state') === PRINTER_STOPPED) {
      throw this.fail(
        'offline',
        `A ${this.description} está parada no sistema${stateMessage ? ` (${stateMessage})` : ''}. Verifique a impressora e retome a fila (no CUPS: cupsenable ${this.address.local ? this.address.queue : '<fila>'})`,
      );
    }
    if (first(queue.printer, 'printer-is-accepting-jobs') === false) {
      throw this.fail(
        'offline',
        `A ${this.description} não está aceitando trabalhos. Libere a fila no sistema (no CUPS: cupsaccept ${this.address.local ? this.address.queue : '<fila>'})`,
      );
    }
    const formats = (queue.printer.get('document-format-supported') ?? []).map(String);
    const format = formats.includes(RAW_CUPS) ? RAW_CUPS : RAW_GENERIC;

    const printed = await this.operation(
      C.PRINT_JOB,
      [
        { tag: C.NAME_WITHOUT_LANG, name: 'job-name', value: 'Balcão' },
        { tag: C.MIME_MEDIA_TYPE, name: 'document-format', value: format },
      ],
      bytes,
      deadline,
    );
    if (printed.status >= 0x0400) throw this.statusError(printed, 'o trabalho');
    const jobId = first(printed.job, 'job-id');
    if (typeof jobId !== 'number') throw this.fail('desconhecido', `O servidor de impressão aceitou o trabalho na ${this.description} sem dizer o número dele`);
    await this.follow(jobId, deadline);
  }

  /** Waits for the job to complete; cancels it and rejects when it will not. */
  private async follow(jobId: number, deadline: number): Promise<void> {
    let last = '';
    for (;;) {
      let answer: Answer;
      try {
        answer = await this.jobAttributes(jobId, deadline);
      } catch (err) {
        // The server stopped answering mid-job: the job may still print; try to take it back.
        return this.cancelOrExplain(jobId, err as PrinterError);
      }
      if (answer.status >= 0x0400) throw this.statusError(answer, 'a consulta do trabalho');
      const state = first(answer.job, 'job-state');
      const reasons = keywords(answer.job, 'job-state-reasons');
      last = (text(answer.job, 'job-printer-state-message') || text(answer.job, 'job-state-message') || last).replace(/\.$/, '');
      const why = last ? ` (${last})` : '';
      if (state === JOB_STATE.completed) return;
      if (state === JOB_STATE.canceled || state === JOB_STATE.aborted) {
        throw this.fail(
          'desconhecido',
          `O sistema ${state === JOB_STATE.canceled ? 'cancelou' : 'interrompeu'} a impressão na ${this.description}${why}. Verifique a impressora`,
        );
      }
      if (state === JOB_STATE.stopped || state === JOB_STATE.held || reasons.includes('printer-stopped')) {
        return this.cancelOrExplain(
          jobId,
          this.fail('offline', `A ${this.description} parou ao imprimir${why}. Verifique a impressora e retome a fila no sistema`),
        );
      }
      if (Date.now() + this.pollMs >= deadline) {
        return this.cancelOrExplain(
          jobId,
          this.fail(
            'timeout',
            `A impressora da ${this.description} não concluiu o trabalho a tempo${why}. Verifique se há papel, se a tampa está fechada e se ela está ligada`,
          ),
        );
      }
      await sleep(this.pollMs);
    }
  }

  private jobAttributes(jobId: number, deadline: number): Promise<Answer> {
    return this.operation(
      C.GET_JOB_ATTRIBUTES,
      [
        { tag: C.INTEGER, name: 'job-id', value: jobId },
        { tag: C.KEYWORD, name: 'requested-attributes', value: ['job-state', 'job-state-reasons', 'job-state-message', 'job-printer-state-message'] },
      ],
      undefined,
      Math.max(deadline, Date.now() + 1000),
    );
  }

  /**
   * A job that will not complete in time is cancelled, so it cannot print later, after the
   * operator reprinted; then `error` is thrown. Resolves instead when the job turns out to have
   * completed meanwhile (the cancel came too late: it printed). When it cannot be cancelled,
   * the message says the job may still come out, so nobody reprints blind.
   */
  private async cancelOrExplain(jobId: number, error: PrinterError): Promise<void> {
    const soon = Date.now() + this.timeoutMs;
    const cancel = await this.operation(C.CANCEL_JOB, [{ tag: C.INTEGER, name: 'job-id', value: jobId }], undefined, soon).catch(() => undefined);
    if (cancel && cancel.status < 0x0400) throw error;
    if (cancel?.status === C.CLIENT_ERROR_NOT_POSSIBLE) {
      // Not cancellable: already over. Over how decides whether the receipt came out.
      const state = await this.jobAttributes(jobId, soon)
        .then((a) => first(a.job, 'job-state'))
        .catch(() => undefined);
      if (state === JOB_STATE.completed) return;
      if (state === JOB_STATE.canceled || state === JOB_STATE.aborted) throw error;
    }
    const reason = error.message.endsWith(`; ${KEPT}`) ? error.message.slice(0, -(KEPT.length + 2)) : error.message;
    throw new PrinterError(error.code, this.description, undefined, {
      message: `${reason}. O trabalho ${jobId} não pôde ser cancelado e ainda pode sair quando a impressora voltar: confira a fila do sistema antes de reimprimir; ${KEPT}`,
      cause: error,
    });
  }

  /** Closes the idle connection to the print server (tests; the terminal lets it time out). */
  async close(): Promise<void> {
    await (await this.#agent)?.close();
  }
}

function defaultUserName(): string {
  try {
    return userInfo().username || 'balcao';
  } catch {
    return 'balcao';
  }
}
