// The returns' lane of the authorization queue (queue/authorization-queue.ts): the same steps as the
// NFC-e (commit before sending, consult before re-sending, verdict + key + webhook event in one
// transaction, backoff while the authority is away, recovery after a crash), over the NF-e
// documents. A return is signed when it is accepted, so there is nothing to sign here.

import type { ServiceDeps } from '../deps.ts';
import { AuthorizationQueue, type QueueLane, type QueueLogger } from '../queue/authorization-queue.ts';
import type { NfeWork } from './store.ts';
import { nfeWebhookEvent } from './view.ts';

type Deps = Pick<ServiceDeps, 'store' | 'clock' | 'companies' | 'authority'>;

export function nfeLane(deps: Deps): QueueLane<NfeWork, string> {
  const store = deps.store.nfe;
  return {
    label: 'NF-e de devolução',
    due: (now, limit, busy) => store.dueDocuments(now, limit, busy),
    prepare: async (work) => ({ xml: work.signedXml, send: work.id }),
    beginSends: (ids) => store.beginSends(ids),
    postpone: (id, at, error) => store.postpone(id, at, error),
    async authorized(work, { verdict, nfeProc }) {
      // A return is never cancelled through this service; a consultation saying so is not
      // expected, and the authorization is what is recorded.
      await store.recordVerdict(
        work.id,
        {
          status: 'autorizado',
          codigoStatus: verdict.cStat,
          motivo: verdict.xMotivo,
          protocolo: verdict.nProt ?? null,
          autorizadoEm: verdict.receivedAt,
          nfeProc,
        },
        nfeWebhookEvent('nfe.autorizada'),
      );
    },
    async rejected(work, { codigoStatus, motivo }) {
      await store.recordVerdict(work.id, { status: 'rejeitado', codigoStatus, motivo }, nfeWebhookEvent('nfe.rejeitada'));
    },
  };
}

export function nfeQueue(deps: Deps, log: QueueLogger): AuthorizationQueue<NfeWork, string> {
  // Returns are rare: a couple in flight at a time is plenty.
  return new AuthorizationQueue({ deps, log, concurrency: 2, lane: nfeLane(deps) });
}
