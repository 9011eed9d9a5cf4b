// The deployment's technical responsible (infRespTec, fiscal/resp-tec.ts): one for every company
// the service issues for, set by whoever runs it (`balcao responsavel-tecnico`), the CSRT sealed
// at rest under the master key like the companies' CSC and certificate (secrets.ts). Each service
// process reads it once, at its first issuance (companies.ts), so a change takes effect when the
// processes restart; the builders then write it in every NFC-e, NF-e and MDF-e.

import { checkTechnicalResponsible, type TechnicalResponsible } from '../fiscal/resp-tec.ts';
import { openText, secretContext, type SecretSealer } from './secrets.ts';
import type { CompanyStore, StoredTechnicalResponsible } from './store.ts';

type Deps = { store: Pick<CompanyStore, 'technicalResponsible' | 'setTechnicalResponsible'>; secrets: SecretSealer };

/** A row of `technical_responsible`, as either driver reads it. */
export type TechnicalResponsibleRow = {
  cnpj: string;
  contact: string;
  email: string;
  phone: string;
  csrt_id: number | null;
  csrt_sealed: Buffer | null;
  updated_at: string;
};

export function technicalResponsibleOf(row: TechnicalResponsibleRow): StoredTechnicalResponsible {
  return {
    cnpj: row.cnpj,
    contact: row.contact,
    email: row.email,
    phone: row.phone,
    csrt: row.csrt_id === null || row.csrt_sealed === null ? null : { id: Number(row.csrt_id), sealed: Buffer.from(row.csrt_sealed) },
    updatedAt: row.updated_at,
  };
}

/** Checks and stores the technical responsible (FieldError naming each bad field); returns it as checked. */
export async function setTechnicalResponsible(deps: Deps, input: unknown, now: Date = new Date()): Promise<TechnicalResponsible> {
  const rt = checkTechnicalResponsible(input);
  await deps.store.setTechnicalResponsible({
    cnpj: rt.cnpj,
    contact: rt.contact,
    email: rt.email,
    phone: rt.phone,
    csrt: rt.csrt ? { id: rt.csrt.id, sealed: deps.secrets.seal(rt.csrt.token, secretContext.csrt) } : null,
    updatedAt: now.toISOString(),
  });
  return rt;
}

/** The technical responsible with its CSRT in clear, for the builders; undefined when none is set. */
export async function loadTechnicalResponsible(deps: Deps): Promise<TechnicalResponsible | undefined> {
  const stored = await deps.store.technicalResponsible();
  if (!stored) return undefined;
  const { cnpj, contact, email, phone, csrt } = stored;
  return { cnpj, contact, email, phone, ...(csrt && { csrt: { id: csrt.id, token: openText(deps.secrets, csrt.sealed, secretContext.csrt) } }) };
}
