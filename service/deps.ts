// The service's dependencies, built once per process and handed to every route plugin. Routes
// never construct their own: one store, one clock, one idempotency mechanism for all.

import type { AuthorityCompany, TaxAuthority } from './authority/port.ts';
import { AuthorityAvailability } from './authority/availability.ts';
import { AuthorityUnavailableError } from './authority/port.ts';
import { SandboxAuthority, type SandboxAuthoritySettings } from './authority/sandbox.ts';
import { CompanyClock, type ServiceMode } from './clock.ts';
import { Companies } from './companies.ts';
import { Idempotency } from './idempotency.ts';
import type { SecretBox } from './secrets.ts';
import type { SandboxStore, ServiceStore } from './store.ts';
import { WebhookSettings } from './webhook-settings.ts';

export type ServiceDeps = {
  mode: ServiceMode;
  store: ServiceStore;
  secrets: SecretBox;
  clock: CompanyClock;
  idempotency: Idempotency;
  companies: Companies;
  webhooks: WebhookSettings;
  /** The tax authority: the simulated one in sandbox mode (see ServiceAuthority). */
  authority: ServiceAuthority;
};

export type DepsOptions = {
  mode: ServiceMode;
  store: ServiceStore;
  secrets: SecretBox;
  /** Real time source (ms since epoch); the company clocks add their sandbox offsets to it. */
  realNow?: () => number;
  /** Production mode: the real tax authority (a SEFAZ client implementing authority/port.ts). */
  authority?: TaxAuthority;
};

export function createServiceDeps({ mode, store, secrets, realNow, authority }: DepsOptions): ServiceDeps {
  return {
    mode,
    store,
    secrets,
    clock: new CompanyClock(store, mode, realNow),
    idempotency: new Idempotency(store),
    companies: new Companies({ store, secrets }),
    webhooks: new WebhookSettings(store, secrets),
    authority: new ServiceAuthority(mode, store, realNow, authority),
  };
}

type AuthorityCall<T> = (authority: TaxAuthority) => Promise<T>;

/**
 * The service's tax authority. Sandbox mode: the simulated one (authority/sandbox.ts) in its own
 * file beside the service database, created on first use (compiling its schemas costs ~150 ms,
 * which a process that never issues should not pay; `warmUp` pays it at start). Production mode:
 * the TaxAuthority handed in (`DepsOptions.authority`, a real SEFAZ client); this repository has
 * none yet, so without one every call is "unavailable" (NFC-e wait in processando, 503 to an
 * MDF-e issuer).
 *
 * The sandbox reads its settings and the company clock synchronously, on every call; the store
 * is asynchronous. So each call first reads this company's settings and clock offset from the
 * store (a change through /sandbox/* applies to the very next call) and the sandbox's callbacks
 * answer from that reading; its clock is real time plus the offset, as CompanyClock computes it.
 * A process that stops leaves the sandbox's SQLite file as any crash would: every decision was
 * committed before it was answered.
 */
export class ServiceAuthority implements TaxAuthority {
  /** Whether each company's latest call was answered (authority/availability.ts). */
  readonly availability: AuthorityAvailability;
  readonly #readings = new Map<string, { settings: SandboxAuthoritySettings; offsetMinutes: number }>();
  #sandbox: SandboxAuthority | undefined;

  constructor(
    private readonly mode: ServiceMode,
    private readonly store: SandboxStore,
    private readonly realNow: () => number = Date.now,
    private readonly production?: TaxAuthority,
  ) {
    this.availability = new AuthorityAvailability(realNow);
  }

  /** Creates the sandbox now (schemas compiled), so the first issuance does not pay for it. */
  warmUp(): void {
    if (this.mode === 'sandbox') this.sandbox();
  }

  /** Closes the sandbox's file; later calls answer "unavailable". For the app's last onClose. */
  close(): void {
    this.#sandbox?.close();
  }

  private sandbox(): SandboxAuthority {
    return (this.#sandbox ??= new SandboxAuthority({
      file: this.store.sandboxAuthorityFile() ?? ':memory:',
      settings: (companyId) => this.#readings.get(companyId)?.settings ?? { latencyMs: 0, available: true },
      clock: (companyId) => new Date(this.realNow() + (this.#readings.get(companyId)?.offsetMinutes ?? 0) * 60_000),
    }));
  }

  private async call<T>(company: AuthorityCompany, fn: AuthorityCall<T>): Promise<T> {
    try {
      const answer = await this.callAuthority(company, fn);
      this.availability.observe(company.id, true);
      return answer;
    } catch (err) {
      if (err instanceof AuthorityUnavailableError) this.availability.observe(company.id, false);
      throw err;
    }
  }

  private async callAuthority<T>(company: AuthorityCompany, fn: AuthorityCall<T>): Promise<T> {
    if (this.mode !== 'sandbox') {
      if (!this.production) throw new AuthorityUnavailableError('Nenhuma autoridade fiscal real configurada neste serviço');
      return fn(this.production);
    }
    const [settings, offsetMinutes] = await Promise.all([
      this.store.getSandboxAuthority(company.id),
      this.store.getClockOffsetMinutes(company.id),
    ]);
    this.#readings.set(company.id, { settings: { latencyMs: settings.latencyMs, available: settings.disponivel }, offsetMinutes });
    return fn(this.sandbox());
  }

  nfeStatus: TaxAuthority['nfeStatus'] = (c) => this.call(c, (a) => a.nfeStatus(c));
  authorizeNfe: TaxAuthority['authorizeNfe'] = (c, xml) => this.call(c, (a) => a.authorizeNfe(c, xml));
  consultNfe: TaxAuthority['consultNfe'] = (c, key) => this.call(c, (a) => a.consultNfe(c, key));
  registerNfeEvent: TaxAuthority['registerNfeEvent'] = (c, xml) => this.call(c, (a) => a.registerNfeEvent(c, xml));
  voidNfeNumbers: TaxAuthority['voidNfeNumbers'] = (c, xml) => this.call(c, (a) => a.voidNfeNumbers(c, xml));
  authorizeMdfe: TaxAuthority['authorizeMdfe'] = (c, xml) => this.call(c, (a) => a.authorizeMdfe(c, xml));
  consultMdfe: TaxAuthority['consultMdfe'] = (c, key) => this.call(c, (a) => a.consultMdfe(c, key));
  registerMdfeEvent: TaxAuthority['registerMdfeEvent'] = (c, xml) => this.call(c, (a) => a.registerMdfeEvent(c, xml));
}
