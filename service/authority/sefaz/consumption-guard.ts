// Keeps Balcão clear of "656 Consumo Indevido". SEFAZ blocks an emitter (CNPJ + IP) for an hour
// when, within an hour, the same document is rejected the same way more than 30 times (events
// and inutilizações: 20), one key is consulted more than 10 times, or one recibo more than 40
// (NT 2018.002; the authorizers may lower these). The guard counts per company and per document
// in this process and stops well before:
//
// - a request identical to one already rejected (same document, same signed bytes) is not sent
//   a third time: the rejection it got is answered again, marked as not resent;
// - a document (key, event Id or inutilização range) rejected with the same cStat `documentLimit`
//   times in the last hour is not sent again until the hour has passed, whatever its content;
// - consultations of one key, and of one recibo, that SEFAZ answered are capped per hour; past
//   the cap the call is not made (AuthorityUnavailableError: the outcome stays unknown and is
//   asked again later).
//
// Counts live in memory: a restart forgets them, which at worst lets a document be rejected a
// few more times, far from the thresholds.

const HOUR_MS = 60 * 60_000;

export type ConsumptionLimits = {
  /** Sends of the very same request that got the same rejection. */
  identicalRequest: number;
  /** Same rejection of one document (any content) per hour, per kind. */
  documentRejections: Record<DocumentKind, number>;
  /** Consultations of one access key per hour (SEFAZ: more than 10 is 656). */
  keyConsultations: number;
  /** Consultations of one recibo per hour (SEFAZ: more than 40). */
  receiptConsultations: number;
};

export type DocumentKind = 'documento' | 'evento' | 'inutilizacao';

export const DEFAULT_LIMITS: ConsumptionLimits = {
  identicalRequest: 2,
  documentRejections: { documento: 15, evento: 10, inutilizacao: 10 },
  keyConsultations: 8,
  receiptConsultations: 20,
};

type Rejection<V> = { at: number; cStat: string; digest: string; verdict: V };

export type Held<V> = { verdict: V; reason: string };

export class ConsumptionGuard<V = unknown> {
  readonly #rejections = new Map<string, Rejection<V>[]>();
  readonly #consultations = new Map<string, number[]>();
  readonly #now: () => number;
  readonly limits: ConsumptionLimits;

  constructor(options: { now?: () => number; limits?: Partial<ConsumptionLimits> } = {}) {
    this.#now = options.now ?? Date.now;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  private recent<T extends { at: number } | number>(map: Map<string, T[]>, key: string): T[] {
    const since = this.#now() - HOUR_MS;
    const list = (map.get(key) ?? []).filter((e) => (typeof e === 'number' ? e : e.at) > since);
    if (list.length === 0) map.delete(key);
    else map.set(key, list);
    if (map.size > 10_000) this.prune(map);
    return list;
  }

  private prune<T extends { at: number } | number>(map: Map<string, T[]>): void {
    const since = this.#now() - HOUR_MS;
    for (const [key, list] of map) {
      if (!list.some((e) => (typeof e === 'number' ? e : e.at) > since)) map.delete(key);
    }
  }

  /**
   * Before sending a document, event or inutilização: the rejection to answer instead of
   * sending, when sending would only repeat it. `digest`: what makes two requests identical
   * (the DigestValue of the signed XML).
   */
  held(kind: DocumentKind, cnpj: string, documentId: string, digest: string): Held<V> | undefined {
    const list = this.recent(this.#rejections, `${kind}|${cnpj}|${documentId}`);
    if (list.length === 0) return undefined;
    const last = list[list.length - 1]!;
    const identical = list.filter((r) => r.digest === digest && r.cStat === last.cStat).length;
    if (last.digest === digest && identical >= this.limits.identicalRequest) {
      return { verdict: last.verdict, reason: `mesma rejeição ${identical} vezes para o mesmo XML` };
    }
    const sameStat = list.filter((r) => r.cStat === last.cStat).length;
    if (sameStat >= this.limits.documentRejections[kind]) {
      return { verdict: last.verdict, reason: `rejeição ${last.cStat} ${sameStat} vezes na última hora` };
    }
    return undefined;
  }

  /** A rejection the authority gave (not one answered by `held`). */
  rejected(kind: DocumentKind, cnpj: string, documentId: string, digest: string, cStat: string, verdict: V): void {
    const key = `${kind}|${cnpj}|${documentId}`;
    const list = this.recent(this.#rejections, key);
    list.push({ at: this.#now(), cStat, digest, verdict });
    this.#rejections.set(key, list);
  }

  /** The document was accepted: its rejections no longer count. */
  accepted(kind: DocumentKind, cnpj: string, documentId: string): void {
    this.#rejections.delete(`${kind}|${cnpj}|${documentId}`);
  }

  /** Whether one more consultation of `id` (an access key or a recibo) stays within the hour's allowance. */
  allowed(what: 'chave' | 'recibo', cnpj: string, id: string): boolean {
    const limit = what === 'chave' ? this.limits.keyConsultations : this.limits.receiptConsultations;
    return this.recent(this.#consultations, `${what}|${cnpj}|${id}`).length < limit;
  }

  /** A consultation SEFAZ answered (the ones that never reached it do not count there either). */
  counted(what: 'chave' | 'recibo', cnpj: string, id: string): void {
    const key = `${what}|${cnpj}|${id}`;
    const list = this.recent(this.#consultations, key);
    list.push(this.#now());
    this.#consultations.set(key, list);
  }
}
