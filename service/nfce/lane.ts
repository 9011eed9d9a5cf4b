// The NFC-e's lane of the authorization queue (queue/authorization-queue.ts): its documents are
// those of ServiceStore.nfce, each built and signed on the signing thread (signer.ts) with the
// cNF and dhEmi fixed when it was accepted, and its verdict recorded with the webhook event.

import { FieldError } from '../../fiscal/errors.ts';
import { AuthorizationQueue, type QueueOptions, type QueueLane, type QueueLogger } from '../queue/authorization-queue.ts';
import { NfceSigner } from './signer.ts';
import type { NfceSend, NfceWork } from './store.ts';
import { nfceWebhookEvent } from './view.ts';

/**
 * The NFC-e lane: documents of ServiceStore.nfce, built and signed on the signing thread.
 * `settled` hears of each verdict once it is recorded (a request waiting for it: Prefer: wait).
 */
export function nfceLane(deps: QueueOptions['deps'], log: QueueLogger, settled: (id: string) => void = () => {}): QueueLane<NfceWork, NfceSend> {
  const signer = new NfceSigner((err) => log.error({ err }, 'fila da NFC-e: thread de assinatura indisponível; assinando no laço principal'));
  const store = deps.store.nfce;
  return {
    label: 'NFC-e',
    due: (now, limit, busy) => store.dueDocuments(now, limit, busy),
    async prepare(work, issuer) {
      if (work.signedXml !== null) return { xml: work.signedXml, send: { id: work.id } };
      if (issuer.emitter.environment !== work.ambiente) {
        // The company moved environment (balcao company update) while this receipt waited: a
        // test sale signed for produção would become a real fiscal document. Refused here, its
        // number is free for a receipt issued again in the new environment.
        throw new FieldError(
          'ambiente',
          `a empresa passou de ${work.ambiente} para ${issuer.emitter.environment} depois que a NFC-e foi recebida; emita-a novamente`,
        );
      }
      const { privateKeyPem, certificatePem } = issuer.certificate;
      const issued = await signer.sign(work.requestJson!, {
        emitter: issuer.emitter,
        credentials: { privateKeyPem, certificatePem },
        dhEmi: work.dhEmi,
        cNF: work.cNF,
        tpEmis: 1,
      });
      if (issued.key !== work.chave) {
        // The emitter's data that make up the key (UF, CNPJ) changed since the request was accepted.
        throw new FieldError('chave', `a chave de acesso mudou (${work.chave} → ${issued.key}): os dados do emitente mudaram`);
      }
      return { xml: issued.xml, send: { id: work.id, signed: { xml: issued.xml, qrcode: issued.qrCode } } };
    },
    beginSends: (sends) => store.beginSends(sends),
    postpone: (id, at, error) => store.postpone(id, at, error),
    async authorized(work, { verdict, nfeProc, cancelled }) {
      await store.recordVerdict(
        work.id,
        {
          status: 'autorizado',
          codigoStatus: verdict.cStat,
          motivo: verdict.xMotivo,
          protocolo: verdict.nProt ?? null,
          autorizadoEm: verdict.receivedAt,
          nfeProc,
          cancelado: cancelled,
        },
        nfceWebhookEvent(cancelled ? 'nfce.cancelada' : 'nfce.autorizada'),
      );
      settled(work.id);
    },
    async rejected(work, { codigoStatus, motivo }) {
      await store.recordVerdict(work.id, { status: 'rejeitado', codigoStatus, motivo }, nfceWebhookEvent('nfce.rejeitada'));
      settled(work.id);
    },
    close: () => signer.close(),
  };
}

/** The NFC-e issuance queue (see the header). */
export class NfceQueue extends AuthorizationQueue<NfceWork, NfceSend> {
  constructor(options: QueueOptions & { settled?: (id: string) => void }) {
    super({ ...options, lane: nfceLane(options.deps, options.log, options.settled) });
  }
}
