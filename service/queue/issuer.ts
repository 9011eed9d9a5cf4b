// The company as the code that authorizes documents needs it (the queues, the events, the
// inutilização, the status probe): the fiscal emitter with its credentials (Companies decrypts and
// parses them once per process) and the same company as the tax authority sees it.

import type { AuthorityCompany } from '../authority/port.ts';
import type { Issuer } from '../companies.ts';
import type { ServiceDeps } from '../deps.ts';

export type AuthorizingIssuer = Issuer & { authority: AuthorityCompany };

// Companies hands out the same Issuer object for a company all day: derive its authority view once.
const authorityViews = new WeakMap<Issuer, AuthorityCompany>();

function authorityView(issuer: Issuer): AuthorityCompany {
  let view = authorityViews.get(issuer);
  if (!view) {
    const { company, emitter, certificate } = issuer;
    view = {
      id: company.id,
      cnpj: emitter.cnpj,
      uf: emitter.address.UF,
      environment: emitter.environment,
      ...(emitter.csc && { csc: emitter.csc }),
      ...(emitter.respTec?.csrt && { csrt: emitter.respTec.csrt }),
      credentials: { privateKeyPem: certificate.privateKeyPem, certificatePem: certificate.certificatePem },
    };
    authorityViews.set(issuer, view);
  }
  return view;
}

/**
 * The issuer of `companyId` at `now` (its clock). Throws FieldError `certificado` when the
 * certificate is not valid then (422 validacao); a company that vanished is an internal error.
 */
export async function authorizingIssuer(deps: Pick<ServiceDeps, 'companies'>, companyId: string, now: Date): Promise<AuthorizingIssuer> {
  const issuer = await deps.companies.issuer(companyId, now);
  if (!issuer) throw new Error(`empresa ${companyId} não encontrada`);
  return { ...issuer, authority: authorityView(issuer) };
}
