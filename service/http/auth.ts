// Bearer-token authentication: every /api/v1 request resolves to one company, and everything it
// touches is that company's. A document of another company is reported exactly like a missing
// one (404), so ids of other tenants cannot even be probed.

import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { remember, scopeKeys, type ReadScope } from '../read-scope.ts';
import type { CompanyStore, TokenOwner } from '../store.ts';
import { hashToken, isWellFormedToken } from '../tokens.ts';
import { ApiError, notFound } from './errors.ts';

export type AuthenticatedCompany = TokenOwner['company'];

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on every authenticated route; read it with companyOf. */
    company?: AuthenticatedCompany;
    /** What this request reads once (read-scope.ts); app.ts makes it, the token lookup seeds it. */
    reads: ReadScope;
  }
}

const unauthorized = (message: string) => new ApiError('nao_autorizado', message, { headers: { 'www-authenticate': 'Bearer realm="balcao"' } });

const BEARER = /^Bearer +(\S+)\s*$/i;

type TokenCheck = { owner: TokenOwner } | { refused: 'missing' | 'malformed' | 'unknown' };

async function checkToken(store: Pick<CompanyStore, 'findTokenOwner'>, header: string | undefined): Promise<TokenCheck> {
  if (!header) return { refused: 'missing' };
  const token = BEARER.exec(header)?.[1];
  if (!token || !isWellFormedToken(token)) return { refused: 'malformed' };
  const presented = hashToken(token);
  const owner = await store.findTokenOwner(presented);
  // The lookup is by hash, so timing reveals nothing about the token; the constant-time
  // comparison is the explicit final check that the stored hash is the presented one.
  if (!owner || !timingSafeEqual(owner.tokenSha256, presented)) return { refused: 'unknown' };
  return { owner };
}

/** The caller is known: its company on the request, and what was read with it in the request's scope. */
function identified(request: FastifyRequest, owner: TokenOwner): void {
  request.company = owner.company;
  if (!request.reads) return;
  remember(scopeKeys.settingsVersion(owner.company.id), owner.settingsVersion, request.reads);
  remember(scopeKeys.clockOffset(owner.company.id), owner.clockOffsetMinutes, request.reads);
}

const REFUSALS = {
  missing: 'Autenticação obrigatória: envie o cabeçalho Authorization: Bearer <token>.',
  malformed: 'Cabeçalho Authorization malformado: esperado "Bearer blc_..." com o token da empresa.',
  unknown: 'Token inválido ou revogado.',
} as const;

/** onRequest hook: Authorization: Bearer <token> → request.company, or 401. */
export function authenticate(store: Pick<CompanyStore, 'findTokenOwner'>) {
  return async function authenticateRequest(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const check = await checkToken(store, request.headers.authorization);
    if ('refused' in check) throw unauthorized(REFUSALS[check.refused]);
    identified(request, check.owner);
  };
}

/** For open routes (/healthz): request.company when a valid token came along; never a 401. */
export function identifyIfPresent(store: Pick<CompanyStore, 'findTokenOwner'>) {
  return async function identifyRequest(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const check = await checkToken(store, request.headers.authorization);
    if ('owner' in check) identified(request, check.owner);
  };
}

/** The authenticated company of a request under /api/v1 (401 if the route was not protected). */
export function companyOf(request: FastifyRequest): AuthenticatedCompany {
  if (!request.company) throw unauthorized('Autenticação obrigatória.');
  return request.company;
}

/**
 * A document looked up by id, checked to belong to the caller's company: missing and foreign
 * are the same 404. Store queries should already filter by company; this is the second lock.
 */
export function ownedOr404<T extends { companyId: string }>(document: T | undefined, company: AuthenticatedCompany, message = 'Documento não encontrado.'): T {
  if (!document || document.companyId !== company.id) throw notFound(message);
  return document;
}
