// Several checkouts in one store: each numbers its NFC-e itself, so each must issue in its own
// series. The service keeps the register (PUT /api/v1/terminais/{id}, docs/api.md "Terminals
// and series"): this terminal claims there the series it issues in (the normal one and, when
// set, the contingency's), under its own id and name.
//
// - A settings change that touches the series (or the service, the token, the pin, the name) is
//   claimed BEFORE it is saved: a series another checkout of the company holds is refused
//   (`serie_em_uso`, the holder named) and nothing changes. A service that cannot be asked
//   refuses a change of the series too (`servico_indisponivel`): a series is never taken
//   unchecked. A change of the service alone (its address, token or pin: the manager may be
//   pointing the checkout at a service still starting) is saved, and its claim is made in the
//   background like the one at start.
// - At start (and every minute until the service answers) the current series are claimed in the
//   background, which also registers a checkout set up by its first-start seed. Should the
//   service say another checkout holds them, finishing a sale is refused with the same words
//   until the manager picks another series. Until the service has confirmed this checkout's
//   series once (kept in the settings, `series_claim`), a sale waits for the claim in flight
//   (at most CLAIM_TIMEOUT_MS): a new checkout seeded with a taken series must not sell a single
//   number in it. Once confirmed, nothing waits: an outage later never slows a sale.
// - The claim's answer says each series' highest number at the service (`numeracao`): the next
//   number is raised above it (numbering.ts), at every start, so a database restored from a copy
//   never issues a number the service already holds. The first sale of each start waits for the
//   start's claim (at most CLAIM_TIMEOUT_MS), confirmed series or not.
// - A service that does not know the register (404) is taken as consent: older services.

import { IssuanceClient, ServiceHttpError, ServiceNetworkError, type TerminalClaimed } from './api-client.ts';
import { TerminalError } from './errors.ts';
import type { SeriesNumbering } from './numbering.ts';
import type { PreparedSettings, Settings } from './settings.ts';

const RETRY_MS = 60_000;
const CLAIM_TIMEOUT_MS = 5_000;

type Target = PreparedSettings['after'];

export const seriesOf = (t: Pick<Target, 'series' | 'contingencySeries'>): number[] =>
  [...new Set([t.series, ...(t.contingencySeries === null ? [] : [t.contingencySeries])])].sort((a, b) => a - b);

function conflictOf(err: ServiceHttpError): string {
  const detail = err.details.find((d) => d.field === 'series')?.message;
  const serie = /série (\d+)/.exec(detail ?? err.serviceMessage)?.[1];
  const holder = /terminal "([^"]+)"/.exec(detail ?? '')?.[1] ?? /\(([^)]+)\)\.?$/.exec(err.serviceMessage)?.[1];
  return `${serie ? `A série ${serie}` : 'A série'} já é usada por outro caixa desta empresa${holder ? ` (${holder})` : ''}: escolha outra série para este caixa`;
}

export class SeriesRegistry {
  private readonly settings: Settings;
  private readonly client: IssuanceClient;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private inflight: Promise<void> | undefined;
  /** Whether a claim of this process got an answer (so the numbering it carries was applied). */
  private answered = false;
  private readonly onNumbering: (numbering: SeriesNumbering[]) => void;
  /** Why this terminal may not issue in its series now (another checkout holds one); null when nothing is known against it. */
  conflict: string | null = null;

  /** `onNumbering`: each claim's answer about where the series stand (numbering.ts raiseToService). */
  constructor(options: { settings: Settings; client: IssuanceClient; onNumbering?: (numbering: SeriesNumbering[]) => void }) {
    this.settings = options.settings;
    this.client = options.client;
    this.onNumbering = options.onNumbering ?? (() => {});
  }

  /** A claim was answered: the series are this checkout's, and where they stand is applied. */
  private claimed(target: Target, answer: TerminalClaimed): void {
    this.conflict = null;
    this.answered = true;
    this.settings.confirmSeriesClaim({ terminalId: target.terminal.id, serviceUrl: target.serviceUrl, series: seriesOf(target) });
    if (answer.numeracao?.length) this.onNumbering(answer.numeracao);
  }

  private current(): Target {
    const c = this.settings.contingencySettings();
    return {
      terminal: this.settings.terminal,
      serviceUrl: this.settings.serviceUrl,
      serviceFingerprint: this.settings.serviceFingerprint,
      token: this.settings.token,
      series: this.settings.series,
      contingencySeries: c.series,
    };
  }

  /**
   * Claims `target`'s series at `target`'s service before the settings are saved. Throws
   * `serie_em_uso` or `servico_indisponivel` (nothing is saved then).
   */
  async claimBeforeSaving(target: Target): Promise<void> {
    if (target.token === '') return; // nothing can be sent without a token; claimed once it is set
    const sameService =
      target.serviceUrl === this.settings.serviceUrl && target.token === this.settings.token && target.serviceFingerprint === this.settings.serviceFingerprint;
    const client = sameService
      ? this.client
      : new IssuanceClient({ baseUrl: target.serviceUrl, token: target.token, fingerprint256: target.serviceFingerprint, timeoutMs: CLAIM_TIMEOUT_MS });
    try {
      this.claimed(target, await client.claimTerminal(target.terminal.id, { nome: target.terminal.name, series: seriesOf(target) }));
    } catch (err) {
      if (err instanceof ServiceHttpError && err.code === 'serie_em_uso') throw new TerminalError('serie_em_uso', conflictOf(err), { field: 'series' });
      if (err instanceof ServiceHttpError && err.status === 404) return;
      const sameSeries = seriesOf(target).join(',') === seriesOf(this.current()).join(',');
      if (err instanceof ServiceNetworkError && sameSeries) return;
      if (err instanceof ServiceNetworkError) {
        throw new TerminalError('servico_indisponivel', `Não foi possível confirmar a série com o serviço de emissão (${err.message}); nada foi alterado`, {
          field: 'series',
        });
      }
      if (err instanceof ServiceHttpError)
        throw new TerminalError('erro_servico', `O serviço de emissão recusou o registro deste caixa (HTTP ${err.status})`, { field: 'series' });
      throw err;
    } finally {
      if (!sameService) await client.close();
    }
  }

  /** Claims the current series now and, until the service has answered, every minute. */
  start(): void {
    this.stopped = false;
    clearTimeout(this.timer);
    void this.claimInBackground();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private claimInBackground(): Promise<void> {
    const run = this.attempt().finally(() => {
      if (this.inflight === run) this.inflight = undefined;
    });
    this.inflight = run;
    return run;
  }

  private async attempt(): Promise<void> {
    const target = this.current();
    if (this.stopped || target.token === '') return;
    let again = false;
    try {
      this.claimed(
        target,
        await this.client.claimTerminal(target.terminal.id, { nome: target.terminal.name, series: seriesOf(target) }, { timeoutMs: CLAIM_TIMEOUT_MS }),
      );
    } catch (err) {
      if (err instanceof ServiceHttpError && err.code === 'serie_em_uso') {
        this.conflict = conflictOf(err);
        again = true; // the other checkout may move away
      } else if (!(err instanceof ServiceHttpError && err.status === 404)) {
        again = true;
      }
    }
    if (again && !this.stopped) {
      this.timer = setTimeout(() => void this.claimInBackground(), RETRY_MS);
      this.timer.unref();
    }
  }

  /** Whether the service ever confirmed the current series for this checkout, at the current service. */
  private confirmed(): boolean {
    const claim = this.settings.seriesClaim;
    const target = this.current();
    return (
      claim !== null &&
      claim.terminalId === target.terminal.id &&
      claim.serviceUrl === target.serviceUrl &&
      claim.series.join(',') === seriesOf(target).join(',')
    );
  }

  /**
   * Before a sale: while the current series was never confirmed, or this start's claim has not
   * been answered yet, the claim in flight is waited for (bounded by its timeout), so a refusal
   * is known, and the numbering applied, before a number is taken.
   */
  async beforeSale(): Promise<void> {
    if (this.inflight && (!this.confirmed() || !this.answered)) await this.inflight;
  }

  /** Refuses a sale while the service says another checkout holds this terminal's series. */
  assertFree(): void {
    if (this.conflict) throw new TerminalError('serie_em_uso', this.conflict, { field: 'series' });
  }
}
