// What GET /metrics tells Prometheus (prom-client), one registry per app:
//
// - balcao_queue_depth{document}: documents waiting for the authority's verdict (NFC-e, NF-e de
//   devolução), read from the database at each scrape: the same number from every process that
//   shares it (use max(), not sum(), across processes).
// - balcao_queue_oldest_age_seconds{document}: how long the oldest of them has been waiting.
// - balcao_authorizations_total{document, cstat}: the authority's answers to this process's
//   authorization requests (100, 150, 204, 539...), per process: sum() across processes.
// - balcao_authority_request_duration_seconds{operation, outcome}: every call to the tax
//   authority, answered (`answered`) or not (`unavailable`, `error`).
// - with `processMetrics`, prom-client's default process metrics (CPU, memory, event loop lag).

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ServiceStore } from './store.ts';

export type DocumentLabel = 'nfce' | 'nfe' | 'mdfe';

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #authorizations: Counter<'document' | 'cstat'>;
  readonly #authorityLatency: Histogram<'operation' | 'outcome'>;

  constructor(store: Pick<ServiceStore, 'nfce' | 'nfe'>, options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.#authorizations = new Counter({
      name: 'balcao_authorizations_total',
      help: 'Respostas da autoridade fiscal aos pedidos de autorização deste processo, por documento e cStat',
      labelNames: ['document', 'cstat'],
      registers,
    });
    this.#authorityLatency = new Histogram({
      name: 'balcao_authority_request_duration_seconds',
      help: 'Duração das chamadas à autoridade fiscal, por operação e desfecho (answered, unavailable, error)',
      labelNames: ['operation', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    const backlogs = async () => {
      const now = Date.now();
      const [nfce, nfe] = await Promise.all([store.nfce.backlog(), store.nfe.backlog()]);
      const age = (oldest: string | null) => (oldest === null ? 0 : Math.max(0, (now - Date.parse(oldest)) / 1000));
      return { nfce: { depth: nfce.processando, age: age(nfce.oldestCreatedAt) }, nfe: { depth: nfe.processando, age: age(nfe.oldestCreatedAt) } };
    };
    // One database read per scrape feeds both gauges: the first collect reads, the second reuses.
    let pending: ReturnType<typeof backlogs> | undefined;
    const read = () => (pending ??= backlogs().finally(() => setImmediate(() => (pending = undefined))));
    new Gauge({
      name: 'balcao_queue_depth',
      help: 'Documentos em processamento aguardando o veredito da autoridade fiscal (lido do banco, igual em todos os processos)',
      labelNames: ['document'],
      registers,
      async collect() {
        const b = await read();
        this.set({ document: 'nfce' }, b.nfce.depth);
        this.set({ document: 'nfe' }, b.nfe.depth);
      },
    });
    new Gauge({
      name: 'balcao_queue_oldest_age_seconds',
      help: 'Há quanto tempo o documento em processamento mais antigo aguarda (segundos; 0 sem fila)',
      labelNames: ['document'],
      registers,
      async collect() {
        const b = await read();
        this.set({ document: 'nfce' }, b.nfce.age);
        this.set({ document: 'nfe' }, b.nfe.age);
      },
    });
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'balcao_' });
  }

  /** The authority answered an authorization request of `document` with `cStat`. */
  authorization(document: DocumentLabel, cStat: string): void {
    this.#authorizations.inc({ document, cstat: cStat });
  }

  /** One call to the authority took `seconds`. */
  authorityCall(operation: string, outcome: 'answered' | 'unavailable' | 'error', seconds: number): void {
    this.#authorityLatency.observe({ operation, outcome }, seconds);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
