// Idempotency of every issuance endpoint (docs/api.md, "Idempotency"), one mechanism for all document
// types. A route calls `begin` before creating anything:
//
//   const documentId = randomUUID();
//   const claim = await deps.idempotency.begin(request, 'nfce', documentId);   // 409/422 thrown
//   if (claim.kind === 'replay') return sendReplay(reply, await view(claim.documentId));
//   ... create the document with `documentId` (key, if any, = claim.key) ...
//   ... when it ends: deps.idempotency.settle({ companyId, docType, key, documentId }, 'authorized' | 'rejected')
//
// The NFC-e, whose claim is made in the same transaction as the document, looks first (`peek`)
// so that a bound key answers before the body is checked, and claims with the insert.
//
// The key is bound to the document id at claim time, so a 409 can always name the document in
// flight. A document whose outcome is unknown (the process died mid-call) is simply never
// settled: its key stays locked until the document type's restart recovery settles it
// (`pending` lists those keys).

import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MAX_KEY_LENGTH } from '../base/common/api/schema.ts';
import { ApiError, invalidRequest } from './http/errors.ts';

export { MAX_KEY_LENGTH, ReferenciaExterna } from '../base/common/api/schema.ts';
import { companyOf } from './http/auth.ts';
import { decideClaim, type ClaimRequest, type ClaimResult, type DocumentType, type KeyAttempt, type KeyOutcome } from './idempotency-rules.ts';
import type { IdempotencyStore, PendingKey } from './store.ts';

export type { ClaimRequest, ClaimResult, DocumentType, KeyAttempt, KeyOutcome } from './idempotency-rules.ts';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAY_HEADER = 'Idempotent-Replayed';
export const BODY_KEY_FIELD = 'referencia_externa';

/** For route schemas (OpenAPI): the optional header every issuance endpoint accepts. */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ minLength: 1, maxLength: MAX_KEY_LENGTH, description: 'Chave de idempotência (1 a 200 caracteres Unicode, em UTF-8)' }),
  ),
});

/** JSON with object keys sorted recursively: equal data, equal text, whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** SHA-256 (hex) of the canonical body without `referencia_externa` (it is the key, not the content). */
export function requestFingerprint(body: unknown): string {
  let content = body;
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && BODY_KEY_FIELD in body) {
    const { [BODY_KEY_FIELD]: _key, ...rest } = body as Record<string, unknown>;
    content = rest;
  }
  return createHash('sha256').update(canonicalJson(content)).digest('hex');
}

const characters = (s: string): number => [...s].length;

/**
 * A UTF-16 surrogate not paired with its partner: JSON can carry one (`"\ud800"`), but it is no
 * Unicode character and has no UTF-8 form, so the database would store it as something else
 * than the key looked up later (a key that then stays locked for ever). With the `u` flag a
 * well-formed pair is one code point and does not match.
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function checkKey(value: unknown, field: string): string {
  if (typeof value !== 'string') throw invalidRequest('Chave de idempotência inválida.', [{ field, message: 'deve ser texto' }]);
  if (LONE_SURROGATE.test(value)) {
    throw invalidRequest('Chave de idempotência inválida.', [
      { field, message: 'não é texto Unicode válido: contém um substituto UTF-16 isolado (como \\ud800)' },
    ]);
  }
  const length = characters(value);
  if (length === 0) throw invalidRequest('Chave de idempotência inválida.', [{ field, message: 'não pode ser vazia' }]);
  if (length > MAX_KEY_LENGTH) {
    throw invalidRequest('Chave de idempotência inválida.', [{ field, message: `deve ter no máximo ${MAX_KEY_LENGTH} caracteres (recebidos ${length})` }]);
  }
  return value;
}

/**
 * The request's key: header `Idempotency-Key` or body `referencia_externa` (same effect), or
 * undefined without either. Throws 400 for an empty or over-long key, or two different keys.
 */
export function readIdempotencyKey(header: string | string[] | undefined, body: unknown): string | undefined {
  if (Array.isArray(header)) {
    throw invalidRequest('Chave de idempotência inválida.', [{ field: IDEMPOTENCY_HEADER, message: 'enviado mais de uma vez' }]);
  }
  const fromHeader = header === undefined ? undefined : checkKey(header, IDEMPOTENCY_HEADER);
  const inBody = body !== null && typeof body === 'object' && !Array.isArray(body) && (body as Record<string, unknown>)[BODY_KEY_FIELD] !== undefined;
  const fromBody = inBody ? checkKey((body as Record<string, unknown>)[BODY_KEY_FIELD], BODY_KEY_FIELD) : undefined;
  if (fromHeader !== undefined && fromBody !== undefined && fromHeader !== fromBody) {
    const message = 'difere da outra chave enviada; envie só uma, ou o mesmo valor nas duas';
    throw invalidRequest('Idempotency-Key e referencia_externa diferentes.', [
      { field: IDEMPOTENCY_HEADER, message },
      { field: BODY_KEY_FIELD, message },
    ]);
  }
  return fromHeader ?? fromBody;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * fastify preValidation hook of the issuance routes: the `Idempotency-Key` header as the API
 * means it, sent once. Node hands header values over as Latin-1 (one character per byte); the key is
 * Unicode text, so its bytes are read as UTF-8, and the same key arrives the same whether it
 * travels in the header or in `referencia_externa`. Bytes that are not UTF-8 are refused
 * (400 naming the header) rather than guessed at.
 */
export async function decodeIdempotencyHeader(request: FastifyRequest): Promise<void> {
  // Node joins a repeated header into one value ("k1, k2"), which is also a valid single key:
  // only the raw header lines tell the two apart. A repeated key header is ambiguous: refused.
  const raw = request.raw.rawHeaders;
  let lines = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === 'idempotency-key') lines += 1;
  if (lines > 1) {
    throw invalidRequest('Chave de idempotência inválida.', [{ field: IDEMPOTENCY_HEADER, message: 'enviado mais de uma vez' }]);
  }
  const value = request.headers['idempotency-key'];
  if (typeof value !== 'string') return;
  let decoded: string;
  try {
    decoded = utf8.decode(Buffer.from(value, 'latin1'));
  } catch {
    throw invalidRequest('Chave de idempotência inválida.', [
      { field: IDEMPOTENCY_HEADER, message: 'não é UTF-8 válido: envie a chave como texto Unicode codificado em UTF-8' },
    ]);
  }
  request.headers['idempotency-key'] = decoded;
}

export type BeginResult =
  /** No key: every call is a new attempt. */
  | { kind: 'unkeyed' }
  /** Claimed: create the document with the id given to begin, then settle when it ends. */
  | { kind: 'new'; key: string }
  /** Already authorized: answer with the document (sendReplay); nothing new is created. */
  | { kind: 'replay'; key: string; documentId: string };

export type IdempotencyOptions = {
  /** Retry-After of a 409, in seconds: about how long the document type takes to settle. */
  retryAfterSeconds?: number;
};

export class Idempotency {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly defaults: IdempotencyOptions = {},
  ) {}

  /** The atomic claim: `new` for exactly one of any number of concurrent identical calls. */
  claim(request: ClaimRequest): Promise<ClaimResult> {
    return this.store.claimIdempotencyKey(request);
  }

  /**
   * What a claim would answer now, without claiming: the refusal (`replay`, `in_progress`,
   * `mismatch`), or undefined when the claim would be `new`. For a route that must check its
   * body before it can claim atomically (with the document, NFC-e): a key already bound to a
   * document answers as bound, whatever the body's checks would say today.
   */
  async peek(request: Omit<ClaimRequest, 'documentId'>): Promise<Exclude<ClaimResult, { kind: 'new' }> | undefined> {
    const decision = decideClaim(await this.store.findIdempotencyKey(request.companyId, request.docType, request.key), request.fingerprint);
    return decision.action === 'refuse' ? decision.result : undefined;
  }

  /** Records how the attempt ended: `authorized` replays from now on, `rejected` frees the key. */
  settle(attempt: KeyAttempt, outcome: KeyOutcome): Promise<boolean> {
    return this.store.settleIdempotencyKey(attempt, outcome);
  }

  /**
   * Frees the key of an attempt that certainly never reached the tax authority (validation
   * failed after the claim, the authority was unavailable): the same as a rejection.
   */
  release(attempt: KeyAttempt): Promise<boolean> {
    return this.settle(attempt, 'rejected');
  }

  /**
   * Undoes the claim of a request refused before anything was stored (a business rule checked
   * after the claim): the key is free, as after a rejection, and nothing stays on record. The
   * claim has to come first: a replay of an authorized key must answer even when the same body
   * would now be refused (its goods already returned, say).
   */
  forget(attempt: KeyAttempt): Promise<boolean> {
    return this.store.forgetIdempotencyKey(attempt);
  }

  /** Keys locked by attempts still unsettled, for the document type's restart recovery. */
  pending(docType: DocumentType): Promise<PendingKey[]> {
    return this.store.pendingIdempotencyKeys(docType);
  }

  /**
   * The HTTP side: reads the key of an authenticated request and claims it for `documentId`.
   * Throws 400 (bad key), 409 `em_processamento` (with Retry-After and the id in flight) or
   * 422 `chave_idempotencia_reutilizada`.
   */
  async begin(request: FastifyRequest, docType: DocumentType, documentId: string, options: IdempotencyOptions = {}): Promise<BeginResult> {
    const company = companyOf(request);
    const key = readIdempotencyKey(request.headers['idempotency-key'], request.body);
    if (key === undefined) return { kind: 'unkeyed' };
    const result = await this.claim({
      companyId: company.id,
      docType,
      key,
      fingerprint: requestFingerprint(request.body),
      documentId,
    });
    switch (result.kind) {
      case 'new':
        return { kind: 'new', key };
      case 'replay':
        return { kind: 'replay', key, documentId: result.documentId };
      case 'in_progress': {
        const retryAfter = options.retryAfterSeconds ?? this.defaults.retryAfterSeconds ?? 1;
        throw new ApiError(
          'em_processamento',
          'Uma requisição com esta chave de idempotência ainda está em processamento; repita em instantes com a mesma chave.',
          { id: result.documentId, headers: { 'retry-after': String(retryAfter) } },
        );
      }
      case 'mismatch':
        throw new ApiError(
          'chave_idempotencia_reutilizada',
          'Esta chave de idempotência já foi usada com outro conteúdo; use uma chave nova para uma operação diferente.',
        );
    }
  }
}

/** Answers a replay: 200, the document in its current state, `idempotent_replay: true`. */
export function sendReplay(reply: FastifyReply, document: object): FastifyReply {
  return reply
    .code(200)
    .header(REPLAY_HEADER, 'true')
    .send({ ...document, idempotent_replay: true });
}
