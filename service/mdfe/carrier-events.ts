// What a carrier does to a manifest on the road (docs/api.md, "MDF-e", "On the road"): a driver
// joins (event 110114, Inclusão de condutor), NF-e loaded on the way are added (110115, Inclusão
// de DF-e), and the manifests the authority still holds as open are listed (MDFeConsNaoEnc), so
// a carrier can find the one a new trip's 611 names and close it. The events go through
// issuance.ts's register: refused by the authority → 422, authority away → 503, nothing recorded.
//
// Decisions where the layout is silent: each event's sequence (nSeqEvento) counts that type's
// events on the manifest, the first being 1; the documents added join the manifest's
// `documentos`; a manifest can take them only while `autorizado` (not closed nor cancelled),
// as the authority requires.

import { mdfeDfeInclusionEvent, mdfeDriverInclusionEvent } from '../../fiscal/events.ts';
import { AuthorityUnavailableError } from '../authority/port.ts';
import { ApiError } from '../http/errors.ts';
import type { ServiceDeps } from '../deps.ts';
import { authorityCompany, type MdfeIssuance } from './issuance.ts';
import type { MdfeDocument, MdfeRecord, MdfeStore } from './store.ts';

const TP_CONDUTOR = '110114';
const TP_DFE = '110115';

export type DriverInput = { nome: string; cpf: string };

export type DocumentsInput = {
  codigo_municipio_carregamento: string;
  municipio_carregamento: string;
  documentos: { chave: string; codigo_municipio_descarga: string; municipio_descarga: string }[];
};

/** A manifest the authority holds as open, with the service's id when it is one of this company's. */
export type OpenManifest = { chave: string; protocolo: string; mdfeId: string | null };

export class CarrierEvents {
  constructor(
    private readonly deps: Pick<ServiceDeps, 'companies' | 'clock' | 'authority'>,
    private readonly store: MdfeStore,
    private readonly issuance: MdfeIssuance,
  ) {}

  /** The next nSeqEvento of `tpEvento` on the manifest. */
  private async sequence(id: string, tpEvento: string): Promise<number> {
    return (await this.store.events(id)).filter((e) => e.tpEvento === tpEvento).length + 1;
  }

  /** POST incluir-condutor: event 110114, in the manifest's turn (its sequence is counted there). */
  includeDriver(companyId: string, id: string, input: DriverInput): Promise<MdfeRecord> {
    return this.issuance.inEventTurn(companyId, id, 'alterado (inclusão de condutor)', async ({ record, issuer, now }) => {
      const evento = mdfeDriverInclusionEvent(
        {
          author: { cnpj: issuer.company.cnpj, environment: issuer.company.ambiente },
          chMDFe: record.chave,
          xNome: input.nome,
          CPF: input.cpf,
          dhEvento: now,
          nSeqEvento: await this.sequence(id, TP_CONDUTOR),
        },
        issuer.certificate,
      );
      return this.issuance.register(issuer, record, TP_CONDUTOR, evento, { nome: input.nome.replace(/\s+/g, ' ').trim(), cpf: input.cpf }, null);
    });
  }

  /** POST incluir-dfe: event 110115, the NF-e joining the manifest's documents, in the manifest's turn. */
  includeDocuments(companyId: string, id: string, input: DocumentsInput): Promise<MdfeRecord> {
    return this.issuance.inEventTurn(companyId, id, 'alterado (inclusão de DF-e)', async ({ record, issuer, now }) => {
      const evento = mdfeDfeInclusionEvent(
        {
          author: { cnpj: issuer.company.cnpj, environment: issuer.company.ambiente },
          chMDFe: record.chave,
          nProt: record.protocolo!,
          cMunCarrega: input.codigo_municipio_carregamento,
          xMunCarrega: input.municipio_carregamento,
          infDoc: input.documentos.map((d) => ({ cMunDescarga: d.codigo_municipio_descarga, xMunDescarga: d.municipio_descarga, chNFe: d.chave })),
          dhEvento: now,
          nSeqEvento: await this.sequence(id, TP_DFE),
        },
        issuer.certificate,
      );
      const added: MdfeDocument[] = input.documentos.map((d) => ({ tipo: 'NFe', chave: d.chave, codigoMunicipioDescarga: d.codigo_municipio_descarga }));
      const dados = {
        codigo_municipio_carregamento: input.codigo_municipio_carregamento,
        municipio_carregamento: input.municipio_carregamento,
        chaves: input.documentos.map((d) => d.chave).join(','),
      };
      return this.issuance.register(issuer, record, TP_DFE, evento, dados, null, added);
    });
  }

  /** GET nao-encerrados: what the authority holds as open for the company's CNPJ (MDFeConsNaoEnc). */
  async openManifests(companyId: string): Promise<{ cStat: string; xMotivo: string; manifests: OpenManifest[] }> {
    const now = await this.deps.clock.now(companyId);
    const issuer = await this.deps.companies.issuer(companyId, now);
    if (!issuer) throw new ApiError('nao_encontrado', 'Empresa não encontrada.');
    let answer;
    try {
      answer = await this.deps.authority.openManifests(authorityCompany(issuer));
    } catch (err) {
      if (err instanceof AuthorityUnavailableError) {
        throw new ApiError('autoridade_indisponivel', 'A autoridade fiscal não respondeu à consulta de MDF-e não encerrados. Tente novamente em instantes.', {
          headers: { 'retry-after': '5' },
        });
      }
      throw err;
    }
    if (answer.cStat !== '111' && answer.cStat !== '112') {
      throw new ApiError('validacao', `A autoridade fiscal recusou a consulta (cStat ${answer.cStat}): ${answer.xMotivo}`, {
        rejeicao: { cStat: answer.cStat, xMotivo: answer.xMotivo },
      });
    }
    const manifests = await Promise.all(
      answer.manifests.map(async (m) => ({ chave: m.chMDFe, protocolo: m.nProt, mdfeId: (await this.store.findByKey(companyId, m.chMDFe))?.id ?? null })),
    );
    return { cStat: answer.cStat, xMotivo: answer.xMotivo, manifests };
  }
}
