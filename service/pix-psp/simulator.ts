// A PSP (the store's bank) as the terminal's PIX client meets it, on the same wire as a real one:
// HTTPS with mutual TLS (the client must present a certificate this simulator's CA signed, as the
// central bank's security manual asks of PSPs), OAuth2 client credentials at a token URL (tokens
// expire: a request with an expired or unknown token gets 401), and the API Pix of the central
// bank's OpenAPI (base/node/pix-api/): immediate charges `PUT/GET/PATCH /cob/{txid}`, the
// received PIX `GET /pix/{e2eid}`, refunds `PUT/GET /pix/{e2eid}/devolucao/{id}`. Every request
// it receives is validated against the document (400 with the violations otherwise), and every
// answer it gives is too: an answer out of the document is recorded in `problems`, which the
// tests assert empty.
//
// What a test or the demo drives (never a real PSP's API): `pay(txid)` pays a charge as the
// customer's bank would (also over HTTPS, `POST /simulador/cob/{txid}/pagar`, `?atrasado=1` paid late, for the demo's
// "Simular pagamento"), and the faults a real PSP shows: an expired charge (the calendar runs
// out; paying it is refused), a charge paid after it was removed or expired (`late`), a charge
// paid twice, 5xx answers, an answer lost after the work was done, tokens expired early, and a
// webhook retried until the receiver says 2xx. `latencyMs` delays every answer (the bench).
//
// It is a sandbox of an outside party, like the tax-authority sandbox: `balcao start` and the
// tests start it; the terminal never imports it.

import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { toCents } from '../../fiscal/money.ts';
import { pixRequestProblems, pixResponseProblems, pixRoute, type PixMethod, type PixRoute } from '../../base/node/pix-api/pix-openapi.ts';
import { createTlsIdentity, type TlsIdentity } from '../authority/sefaz/simulator/tls-identity.ts';

/** The simulated PSP's CNPJ (the payment institution in the NFC-e's card group) and ISPB. */
export const SIMULATED_PSP = { cnpj: '99990001000198', ispb: '99990001', name: 'PSP simulado do Balcão' } as const;

const API_BASE = '/api/v2';
const TOKEN_PATH = '/oauth/token';
const CONTROL_BASE = '/simulador';
const ERROR_BASE = 'https://pix.bcb.gov.br/api/v2/error/';
const SCOPES = 'cob.write cob.read pix.write pix.read';

type Devolucao = { id: string; rtrId: string; valor: string; horario: { solicitacao: string; liquidacao?: string }; status: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' };
type ReceivedPix = { endToEndId: string; txid: string; valor: string; chave: string; horario: string; devolucoes: Devolucao[] };
type Charge = {
  txid: string;
  revisao: number;
  criacao: Date;
  expiracao: number;
  status: 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';
  valor: string;
  chave: string;
  solicitacaoPagador?: string;
  locId: number;
  location: string;
  pix: ReceivedPix[];
};

export type PixPspOptions = {
  clientId?: string;
  clientSecret?: string;
  /** Lifetime of an access token (default 3600 s). */
  tokenTtlSeconds?: number;
  /** Delay before every answer (default 0). */
  latencyMs?: number;
  /** Where to POST the `pix` webhook when a charge is paid (the API Pix's webhook body). */
  webhookUrl?: string;
};

export type PixPspSimulator = {
  /** The API Pix's base URL (`https://127.0.0.1:port/api/v2`). */
  url: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** The CA that signed the server's and the client's certificates (PEM). */
  caPem: string;
  /** A client certificate and key the simulator accepts (PEM). */
  client: { certPem: string; keyPem: string };
  /** All of the above as a terminal's PSP settings take it (electron/core/pix/psp-settings.ts `PspSetup`). */
  terminalSetup: {
    baseUrl: string;
    tokenUrl: string;
    clientId: string;
    clientSecret: string;
    certificate: { certPem: string; keyPem: string };
    caPem: string;
    pspCnpj: string;
  };
  /** Requests and answers out of the OpenAPI document, or other wrongs the simulator saw. */
  problems: string[];
  /** Every API Pix request received, in order (`PUT /cob/{txid}`), after OAuth. */
  requests: string[];
  latencyMs: number;
  /** Pays the charge as the payer's bank would; refused (throws) when it cannot be paid, unless `late`. */
  pay(txid: string, options?: { late?: boolean }): ReceivedPix;
  /** Moves the charge's calendar so it has expired. */
  expire(txid: string): void;
  charge(txid: string): Charge | undefined;
  /** The next `count` API requests answer `status` (default 503) without doing anything. */
  failNext(count?: number, status?: number): void;
  /** The next API request is carried out, and its answer is lost (the connection is dropped). */
  loseNextAnswer(): void;
  /** Every token issued so far stops working. */
  expireTokens(): void;
  /** Webhook deliveries made (URL, status or error) — each attempt. */
  webhookAttempts: { txid: string; outcome: string }[];
  close(): Promise<void>;
};

/** The PSP's books: charges, received PIX, refunds, tokens, and the faults armed for the next requests. */
class SimulatedPsp {
  readonly charges = new Map<string, Charge>();
  readonly pixByE2e = new Map<string, ReceivedPix>();
  readonly tokens = new Map<string, number>();
  readonly problems: string[] = [];
  readonly requests: string[] = [];
  readonly webhookAttempts: { txid: string; outcome: string }[] = [];
  failures = { count: 0, status: 503 };
  loseNext = false;
  host = '';
  private nextLoc = 1;
  private e2eSeq = 0;

  constructor(
    readonly options: PixPspOptions,
    readonly clientId: string,
    readonly clientSecret: string,
  ) {}

  private expired(c: Charge): boolean {
    return Date.now() >= c.criacao.getTime() + c.expiracao * 1000;
  }

  private endToEndId(): string {
    // E + the PSP's ISPB + yyyyMMddHHmm (UTC) + 11 characters: 32 in all (the SPI's format).
    const stamp = iso(new Date()).replace(/[-:T]/g, '').slice(0, 12);
    return `E${SIMULATED_PSP.ispb}${stamp}${(++this.e2eSeq).toString(36).padStart(4, '0')}${randomBytes(6).toString('hex').slice(0, 7)}`;
  }

  /** Answers one API Pix request already validated against the document. */
  api(route: PixRoute, body: unknown): Answer {
    const { template, method, params } = route;
    const key = `${method} ${template}`;
    if (key === 'PUT /cob/{txid}') return this.createCharge(params.txid!, body as CobBody);
    if (template === '/cob/{txid}') {
      const charge = this.charges.get(params.txid!);
      if (!charge) return problem(404, 'NaoEncontrado', 'Não Encontrado', `Cobrança ${params.txid} não encontrada.`);
      if (method === 'PATCH') return this.reviseCharge(charge, body as { status?: string });
      return { status: 200, body: chargeBody(charge) };
    }
    const pix = params.e2eid ? this.pixByE2e.get(params.e2eid) : undefined;
    if (!pix) return problem(404, 'NaoEncontrado', 'Não Encontrado', `Pix ${params.e2eid ?? ''} não encontrado.`);
    if (key === 'GET /pix/{e2eid}') return { status: 200, body: pixBody(pix) };
    if (key === 'PUT /pix/{e2eid}/devolucao/{id}') return this.refund(pix, params.id!, (body as { valor: string }).valor);
    const d = pix.devolucoes.find((x) => x.id === params.id);
    if (!d) return problem(404, 'NaoEncontrado', 'Não Encontrado', `Devolução ${params.id} não encontrada.`);
    // The SPI settles a refund in seconds: the first look after the request finds it settled.
    if (d.status === 'EM_PROCESSAMENTO') Object.assign(d, { status: 'DEVOLVIDO', horario: { ...d.horario, liquidacao: iso(new Date()) } });
    return { status: 200, body: d };
  }

  private createCharge(txid: string, b: CobBody): Answer {
    if (this.charges.has(txid)) return problem(400, 'CobOperacaoInvalida', 'Cobrança inválida.', `O txid ${txid} já foi utilizado por outra cobrança.`);
    const c: Charge = {
      txid,
      revisao: 0,
      criacao: new Date(),
      expiracao: b.calendario?.expiracao ?? 86400,
      status: 'ATIVA',
      valor: b.valor.original,
      chave: b.chave,
      ...(b.solicitacaoPagador ? { solicitacaoPagador: b.solicitacaoPagador } : {}),
      locId: this.nextLoc++,
      location: `${this.host}/qr/v2/${randomUUID().replaceAll('-', '')}`,
      pix: [],
    };
    this.charges.set(txid, c);
    return { status: 201, body: chargeBody(c) };
  }

  private reviseCharge(charge: Charge, b: { status?: string }): Answer {
    if (b.status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR') {
      if (charge.status !== 'ATIVA')
        return problem(400, 'CobOperacaoInvalida', 'Cobrança inválida.', `A cobrança está ${charge.status} e não pode ser removida.`);
      charge.status = 'REMOVIDA_PELO_USUARIO_RECEBEDOR';
      charge.revisao += 1;
    }
    return { status: 200, body: chargeBody(charge) };
  }

  private refund(pix: ReceivedPix, id: string, valor: string): Answer {
    const existing = pix.devolucoes.find((d) => d.id === id);
    if (existing) return { status: 201, body: existing };
    const refunded = pix.devolucoes.reduce((sum, d) => sum + toCents(d.valor, 'valor'), 0n);
    if (refunded + toCents(valor, 'valor') > toCents(pix.valor, 'valor'))
      return problem(400, 'PixDevolucaoInvalida', 'Devolução inválida.', 'O valor da devolução excede o valor do Pix ainda não devolvido.');
    const d: Devolucao = { id, rtrId: `D${this.endToEndId().slice(1)}`, valor, horario: { solicitacao: iso(new Date()) }, status: 'EM_PROCESSAMENTO' };
    pix.devolucoes.push(d);
    return { status: 201, body: { ...d } };
  }

  pay(txid: string, opts: { late?: boolean } = {}): ReceivedPix {
    const c = this.charges.get(txid);
    if (!c) throw new Error(`Cobrança ${txid} não existe no simulador.`);
    if (!opts.late && (c.status !== 'ATIVA' || this.expired(c)))
      throw new Error(`Cobrança ${txid} não pode ser paga (${this.expired(c) ? 'expirada' : c.status}).`);
    const p: ReceivedPix = { endToEndId: this.endToEndId(), txid, valor: c.valor, chave: c.chave, horario: iso(new Date()), devolucoes: [] };
    c.pix.push(p);
    c.status = 'CONCLUIDA';
    this.pixByE2e.set(p.endToEndId, p);
    if (this.options.webhookUrl) void this.deliverWebhook(this.options.webhookUrl, p);
    return p;
  }

  private async deliverWebhook(url: string, p: ReceivedPix): Promise<void> {
    // Retried with backoff until the receiver answers 2xx, as PSPs do (bounded: 6 attempts).
    for (let attempt = 0; attempt < 6; attempt++) {
      try {
        const res = await fetch(`${url.replace(/\/$/, '')}/pix`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ pix: [pixBody(p)] }),
        });
        this.webhookAttempts.push({ txid: p.txid, outcome: String(res.status) });
        if (res.ok) return;
      } catch (error) {
        this.webhookAttempts.push({ txid: p.txid, outcome: (error as Error).message });
      }
      await sleep(200 * 2 ** attempt);
    }
  }

  issueToken(req: IncomingMessage, raw: string): Answer {
    const form = new URLSearchParams(raw);
    if (form.get('grant_type') !== 'client_credentials') return { status: 400, body: { error: 'unsupported_grant_type' } };
    const match = /^Basic (\S+)$/.exec(req.headers.authorization ?? '');
    const [id, secret] = match ? Buffer.from(match[1]!, 'base64').toString('utf8').split(':') : [form.get('client_id'), form.get('client_secret')];
    const same = (a: string | null | undefined, b: string) => !!a && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
    if (!same(id, this.clientId) || !same(secret, this.clientSecret)) return { status: 401, body: { error: 'invalid_client' } };
    const ttl = this.options.tokenTtlSeconds ?? 3600;
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, Date.now() + ttl * 1000);
    return { status: 200, body: { access_token: token, token_type: 'Bearer', expires_in: ttl, scope: SCOPES } };
  }

  bearerValid(req: IncomingMessage): boolean {
    const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const until = match && this.tokens.get(match[1]!);
    return !!until && until > Date.now();
  }

  /** One HTTPS request: the token URL, the demo's control, or the API Pix. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'https://psp');
    const send = async (answer: Answer) => {
      if (this.options.latencyMs) await sleep(this.options.latencyMs);
      res.writeHead(answer.status, answer.body === undefined ? {} : { 'content-type': answer.type ?? 'application/json' });
      res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
    };
    if (url.pathname === TOKEN_PATH && req.method === 'POST') return send(this.issueToken(req, raw));
    const control = new RegExp(`^${CONTROL_BASE}/cob/([^/]+)/pagar$`).exec(url.pathname);
    if (control && req.method === 'POST') {
      try {
        // ?atrasado=1: the "paid late" fault over HTTPS (a removed or expired charge paid anyway).
        const late = url.searchParams.get('atrasado') === '1';
        return await send({ status: 200, body: { endToEndId: this.pay(decodeURIComponent(control[1]!), { late }).endToEndId } });
      } catch (error) {
        return send({ status: 409, body: { detail: (error as Error).message } });
      }
    }
    if (!url.pathname.startsWith(`${API_BASE}/`)) return send({ status: 404 });
    if (!this.bearerValid(req)) return send(problem(401, 'AcessoNegado', 'Acesso Negado', 'Token de acesso ausente, inválido ou expirado.'));
    const method = (req.method ?? 'GET') as PixMethod;
    const path = url.pathname.slice(API_BASE.length);
    this.requests.push(`${method} ${path}`);
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      return send(problem(400, 'RequisicaoInvalida', 'Requisição inválida.', 'O corpo não é JSON.'));
    }
    const violations = pixRequestProblems({ method, path, query: Object.fromEntries(url.searchParams), body });
    const route = pixRoute(method, path);
    if (violations.length || !route) {
      this.problems.push(`requisição ${method} ${path}: ${violations.join('; ')}`);
      return send(problem(400, 'RequisicaoInvalida', 'Requisição inválida.', violations.join('; ')));
    }
    if (this.failures.count > 0) {
      this.failures.count -= 1;
      return send(problem(this.failures.status, 'ServicoIndisponivel', 'Serviço Indisponível', 'Falha simulada do PSP.'));
    }
    const answer = this.api(route, body);
    const wrong = pixResponseProblems(route, answer.status, answer.body);
    if (wrong.length) this.problems.push(`resposta ${method} ${path}: ${wrong.join('; ')}`);
    if (this.loseNext) {
      this.loseNext = false;
      req.socket.destroy();
      return;
    }
    return send(answer);
  }
}

export async function startPixPspSimulator(options: PixPspOptions = {}): Promise<PixPspSimulator> {
  const identity: TlsIdentity = createTlsIdentity('PSP PIX simulado', 'terminal Balcao (teste)');
  const psp = new SimulatedPsp(options, options.clientId ?? 'balcao-terminal', options.clientSecret ?? randomBytes(18).toString('base64url'));
  const server: Server = createServer(
    { key: identity.keyPem, cert: identity.certPem, ca: [identity.caPem], requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' },
    (req, res) => {
      psp.handle(req, res).catch((error: unknown) => {
        psp.problems.push(`erro interno: ${(error as Error).message}`);
        if (!res.headersSent) res.writeHead(500).end();
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  psp.host = `localhost:${port}`;
  const origin = `https://127.0.0.1:${port}`;

  return {
    url: `${origin}${API_BASE}`,
    tokenUrl: `${origin}${TOKEN_PATH}`,
    clientId: psp.clientId,
    clientSecret: psp.clientSecret,
    caPem: identity.caPem,
    client: identity.client!,
    terminalSetup: {
      baseUrl: `${origin}${API_BASE}`,
      tokenUrl: `${origin}${TOKEN_PATH}`,
      clientId: psp.clientId,
      clientSecret: psp.clientSecret,
      certificate: identity.client!,
      caPem: identity.caPem,
      pspCnpj: SIMULATED_PSP.cnpj,
    },
    problems: psp.problems,
    requests: psp.requests,
    get latencyMs() {
      return options.latencyMs ?? 0;
    },
    set latencyMs(ms: number) {
      options.latencyMs = ms;
    },
    pay: (txid, opts) => psp.pay(txid, opts),
    expire(txid) {
      const c = psp.charges.get(txid);
      if (c) c.criacao = new Date(Date.now() - (c.expiracao + 1) * 1000);
    },
    charge: (txid) => psp.charges.get(txid),
    failNext(count = 1, status = 503) {
      psp.failures = { count, status };
    },
    loseNextAnswer() {
      psp.loseNext = true;
    },
    expireTokens() {
      psp.tokens.clear();
    },
    webhookAttempts: psp.webhookAttempts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Answer = { status: number; type?: string; body?: unknown };
type CobBody = { calendario?: { expiracao?: number }; valor: { original: string }; chave: string; solicitacaoPagador?: string };

const iso = (d: Date) => d.toISOString();

const problem = (status: number, type: string, title: string, detail: string): Answer => ({
  status,
  type: 'application/problem+json',
  body: { type: `${ERROR_BASE}${type}`, title, status, detail },
});

function chargeBody(c: Charge): Record<string, unknown> {
  return {
    calendario: { criacao: iso(c.criacao), expiracao: c.expiracao },
    txid: c.txid,
    revisao: c.revisao,
    loc: { id: c.locId, txid: c.txid, location: c.location, tipoCob: 'cob', criacao: iso(c.criacao) },
    location: c.location,
    status: c.status,
    valor: { original: c.valor },
    chave: c.chave,
    ...(c.solicitacaoPagador ? { solicitacaoPagador: c.solicitacaoPagador } : {}),
    ...(c.pix.length ? { pix: c.pix.map(pixBody) } : {}),
  };
}

function pixBody(p: ReceivedPix): Record<string, unknown> {
  return {
    endToEndId: p.endToEndId,
    txid: p.txid,
    valor: p.valor,
    chave: p.chave,
    horario: p.horario,
    ...(p.devolucoes.length ? { devolucoes: p.devolucoes } : {}),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
