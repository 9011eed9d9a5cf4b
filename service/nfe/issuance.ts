// Accepting a return (POST /api/v1/nfe/devolucao) and the restart recovery of its keys.
//
// A return is accepted in one turn per company: the NFC-e is looked up (this company's, else
// 404; authorized, else 422 estado_invalido), the quantities already returned by the company's
// other returns (processing or authorized) are read, the next number is allocated, the NF-e is
// built and signed (fiscal/nfe/devolucao.ts checks every item and quantity, naming the field),
// and the document is stored, signed, in `processando`. The queue sends it.
//
// Decisions where the contract is silent:
// - Numbering: the service owns the model 55 sequence of each company; series NFE_SERIE (1):
//   the company settings have no NF-e series yet. The number is allocated on acceptance; the
//   lowest number the authority rejected (or the service refused before sending) and no other
//   return took is given again to the next return (a rejected number is not consumed at the
//   authority), else the next after the highest. A number whose outcome is unknown is never
//   given again. Acceptances of one company are serialized in this process and, when several
//   processes share the store (PostgreSQL), among them (NfeStore.numberingTurn); a unique index
//   on the live numbers makes a slip loud.
// - The idempotency key is claimed first (409 / 422 / replay as for the NFC-e), so an authorized
//   return replays even though its quantities are no longer available; a request refused after
//   the claim (404, 422) frees the key again, as a rejection does.

import { issueDevolucao } from '../../fiscal/nfe/devolucao.ts';
import type { DevolucaoRequest } from '../../fiscal/nfe/types.ts';
import type { ServiceDeps } from '../deps.ts';
import { ApiError } from '../http/errors.ts';
import type { KeyAttempt } from '../idempotency.ts';
import { authorizingIssuer } from '../queue/issuer.ts';
import type { QueueLogger } from '../queue/authorization-queue.ts';
import { Turns } from '../turns.ts';
import type { DevolucaoBody } from './schemas.ts';
import type { NfeRecord } from './store.ts';

/** The series of the company's model 55 documents. */
export const NFE_SERIE = 1;

const STATE_NAMES: Record<string, string> = { processando: 'em processamento', cancelado: 'cancelada', rejeitado: 'rejeitada' };

export class Returns {
  /** A company's acceptances, one at a time in this process (then among processes: numberingTurn). */
  readonly #turns = new Turns();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly log: QueueLogger,
  ) {}

  /**
   * Checks and stores the return with id `id` (key: the idempotency key already claimed for it).
   * On a refusal the key is freed and the refusal thrown (404, 422).
   */
  async accept(companyId: string, body: DevolucaoBody, id: string, key: string | undefined): Promise<NfeRecord> {
    try {
      // In this process's turn, then in the store's (the other processes sharing it).
      return await this.#turns.run(companyId, () => this.deps.store.nfe.numberingTurn(companyId, () => this.create(companyId, body, id, key)));
    } catch (err) {
      // Stored means queued: its key is settled by its verdict, never freed here. Refused
      // before that, the request leaves nothing behind, its key's claim included.
      if (key !== undefined && !(await this.deps.store.nfe.exists(id))) {
        await this.deps.idempotency.forget({ companyId, docType: 'nfe', key, documentId: id });
      }
      throw err;
    }
  }

  private async create(companyId: string, body: DevolucaoBody, id: string, key: string | undefined): Promise<NfeRecord> {
    const store = this.deps.store.nfe;
    const nfce = await store.findNfce(companyId, body.chave_nfce);
    if (!nfce) {
      throw new ApiError('nao_encontrado', 'NFC-e não encontrada nesta empresa.', {
        details: [{ field: 'chave_nfce', message: 'nenhuma NFC-e desta empresa tem esta chave de acesso' }],
      });
    }
    if (nfce.status !== 'autorizado' || !nfce.nfeProc) {
      const state = STATE_NAMES[nfce.status] ?? nfce.status;
      throw new ApiError('estado_invalido', `Só uma NFC-e autorizada pode ter devolução; esta está ${state}.`, {
        details: [{ field: 'chave_nfce', message: `NFC-e ${state}` }],
      });
    }
    const now = await this.deps.clock.now(companyId);
    const issuer = await authorizingIssuer(this.deps, companyId, now);
    const returned = await store.returnedQuantities(companyId, body.chave_nfce);
    const numero = await store.nextNumber(companyId, NFE_SERIE);
    const { referencia_externa: _key, ...request } = body;
    const issued = issueDevolucao(request as DevolucaoRequest, {
      emitter: issuer.emitter,
      credentials: { privateKeyPem: issuer.certificate.privateKeyPem, certificatePem: issuer.certificate.certificatePem },
      nfceXml: nfce.nfeProc,
      serie: NFE_SERIE,
      nNF: numero,
      dhEmi: now,
      returned,
    });
    await store.insertDocument({
      id,
      companyId,
      tipo: 'devolucao',
      idempotencyKey: key ?? null,
      serie: issued.serie,
      numero: issued.nNF,
      chave: issued.key,
      nfceId: nfce.id,
      chaveNfce: body.chave_nfce,
      dhEmi: issued.dhEmi,
      ambiente: issuer.emitter.environment,
      justificativa: request.justificativa.trim(),
      valorTotal: issued.vNF,
      itens: issued.items.map((i) => ({
        numeroItem: i.numero_item,
        codigo: i.cProd,
        descricao: i.xProd,
        unidade: i.uCom,
        quantidadeUnits: i.units,
        valor: i.valor,
      })),
      requestJson: JSON.stringify(request),
      signedXml: issued.xml,
      createdAt: new Date(),
    });
    const record = await store.getDocument(companyId, id);
    if (!record) throw new Error(`NF-e ${id} não encontrada logo após ser gravada`);
    return record;
  }

  /**
   * Restart recovery of the keys: a key claimed by a stopped process whose return was never
   * stored is freed (nothing reached the authority). Returns stored in `processando` are the
   * queue's: it consults the authority before sending them again.
   */
  async recover(): Promise<void> {
    for (const pending of await this.deps.idempotency.pending('nfe')) {
      if (await this.deps.store.nfe.exists(pending.documentId)) continue;
      const attempt: KeyAttempt = { companyId: pending.companyId, docType: 'nfe', key: pending.key, documentId: pending.documentId };
      await this.deps.idempotency.release(attempt);
      this.log.warn({ documentId: pending.documentId }, 'devolução sem documento gravado: chave de idempotência liberada');
    }
  }
}
