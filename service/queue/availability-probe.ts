// While a company's tax authority is known to be down and nothing else calls it (no NFC-e due:
// the terminals are selling in offline contingency), its status service (NFeStatusServico) is
// asked at most once a minute, so the service learns when it is back and says so
// (authority/availability.ts). Never while it answers: SEFAZ counts needless status calls
// against the caller (cStat 656).

import type { ServiceDeps } from '../deps.ts';
import { authorizingIssuer } from './issuer.ts';

export const PROBE_INTERVAL_MS = 60_000;
const TICK_MS = 5_000;
const PROBE_ENV = 'BALCAO_SONDA_AUTORIDADE_MS';

/** The interval between probes: BALCAO_SONDA_AUTORIDADE_MS (tests shorten it), at least 1 s. */
export function probeIntervalFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[PROBE_ENV]?.trim();
  if (!text) return PROBE_INTERVAL_MS;
  if (!/^[0-9]+$/.test(text) || Number(text) < 1000) throw new RangeError(`${PROBE_ENV} inválido ("${text}"): informe milissegundos, 1000 ou mais`);
  return Number(text);
}

type ProbeLogger = { debug(obj: object, msg: string): void };

export class AuthorityProbe {
  #timer: NodeJS.Timeout | undefined;
  readonly #probing = new Set<string>();

  constructor(
    private readonly deps: Pick<ServiceDeps, 'authority' | 'companies' | 'clock'>,
    private readonly log: ProbeLogger,
    private readonly intervalMs = PROBE_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.#timer ??= setInterval(() => this.tick(), Math.min(TICK_MS, this.intervalMs));
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Probes every company whose authority was last seen down at least `intervalMs` ago. */
  tick(): Promise<void>[] {
    const now = this.now();
    return this.deps.authority.availability
      .down()
      .filter(({ companyId, lastCall }) => now - lastCall >= this.intervalMs && !this.#probing.has(companyId))
      .map(({ companyId }) => this.probe(companyId));
  }

  private async probe(companyId: string): Promise<void> {
    this.#probing.add(companyId);
    try {
      const issuer = await authorizingIssuer(this.deps, companyId, await this.deps.clock.now(companyId));
      // The answer, or its absence, is recorded by the authority itself (deps.ts ServiceAuthority).
      await this.deps.authority.nfeStatus(issuer.authority);
    } catch (err) {
      this.log.debug({ companyId, err }, 'autoridade fiscal ainda sem resposta ao serviço de status');
    } finally {
      this.#probing.delete(companyId);
    }
  }
}
