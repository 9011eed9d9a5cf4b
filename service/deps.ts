// The service's dependencies, built once per process and handed to every route plugin. Routes
// never construct their own: one store, one clock, one idempotency mechanism for all.

import type { AuthorityCompany, TaxAuthority } from './authority/port.ts';
import { AuthorityAvailability } from './authority/availability.ts';
import { AuthorityUnavailableError } from './authority/port.ts';
import { SandboxAuthority, type SandboxAuthoritySettings } from './authority/sandbox.ts';
import { SefazAuthority } from './authority/sefaz/connector.ts';
import { SefazSimulator } from './authority/sefaz/simulator/server.ts';
import { CompanyClock, type ServiceMode } from './clock.ts';
import { Companies } from './companies.ts';
import { Idempotency } from './idempotency.ts';
import { ServiceMetrics, type DocumentLabel } from './metrics.ts';
import type { SecretSealer } from './secrets.ts';
import type { SandboxStore, ServiceStore } from './store.ts';
import { WebhookSettings } from './webhook-settings.ts';
import type { DestinationPolicy } from './webhooks/destinations.ts';

export type ServiceDeps = {
  mode: ServiceMode;
  store: ServiceStore;
  secrets: SecretSealer;
  clock: CompanyClock;
  idempotency: Idempotency;
  companies: Companies;
  webhooks: WebhookSettings;
  /** The tax authority: the simulated one in sandbox mode (see ServiceAuthority). */
  authority: ServiceAuthority;
  /** What GET /metrics reports (metrics.ts). */
  metrics: ServiceMetrics;
};

export type DepsOptions = {
  mode: ServiceMode;
  store: ServiceStore;
  secrets: SecretSealer;
  /** Real time source (ms since epoch); the company clocks add their sandbox offsets to it. */
  realNow?: () => number;
  /** Production mode: the real tax authority (a SEFAZ client implementing authority/port.ts). */
  authority?: TaxAuthority;
  /**
   * Sandbox mode: how the service reaches the simulated authority. `in-process` (default): a
   * method call. `wire`: the SEFAZ connector, over HTTPS with mutual TLS, to the SEFAZ simulator
   * on a loopback port, both deciding with the same sandbox rule book.
   */
  sandboxTransport?: SandboxTransport;
  /** Also report the process's own metrics (CPU, memory, event loop) in GET /metrics. */
  processMetrics?: boolean;
  /** Where companies' webhooks may point (webhooks/destinations.ts); default any address. */
  webhookDestinations?: DestinationPolicy;
};

export type SandboxTransport = 'in-process' | 'wire';

export function createServiceDeps({
  mode,
  store,
  secrets,
  realNow,
  authority,
  sandboxTransport,
  processMetrics,
  webhookDestinations,
}: DepsOptions): ServiceDeps {
  const metrics = new ServiceMetrics(store, { processMetrics });
  return {
    mode,
    store,
    secrets,
    clock: new CompanyClock(store, mode, realNow),
    idempotency: new Idempotency(store),
    companies: new Companies({ store, secrets }),
    webhooks: new WebhookSettings(store, secrets, webhookDestinations),
    authority: new ServiceAuthority(mode, store, realNow, authority, sandboxTransport, metrics),
    metrics,
  };
}

type AuthorityCall<T> = (authority: TaxAuthority) => Promise<T>;

/**
 * The service's tax authority. Sandbox mode: the simulated one (authority/sandbox.ts) in its own
 * file beside the service database, created on first use (compiling its schemas costs ~150 ms,
 * which a process that never issues should not pay; `warmUp` pays it at start). Production mode:
 * the TaxAuthority handed in (`DepsOptions.authority`, the SEFAZ connector of
 * authority/sefaz/connector.ts); without one every call is "unavailable" (NFC-e wait in
 * processando, 503 to an MDF-e issuer).
 *
 * The sandbox reads its settings and the company clock synchronously, on every call; the store
 * is asynchronous. So each call first reads this company's settings and clock offset from the
 * store (a change through /sandbox/* applies to the very next call) and the sandbox's callbacks
 * answer from that reading; its clock is real time plus the offset, as CompanyClock computes it.
 * A process that stops leaves the sandbox's SQLite file as any crash would: every decision was
 * committed before it was answered.
 *
 * Over the wire (`sandboxTransport: 'wire'`) the same sandbox sits behind the SEFAZ simulator on
 * a loopback port with a CA made at start, and the calls go through the real connector: SOAP,
 * schemas, mutual TLS with the company's certificate, the anti-656 guard. The company is enrolled
 * with the simulator before each call (its certificate trusted, its CSC known), as a company is
 * registered at SEFAZ before it issues.
 */
export class ServiceAuthority implements TaxAuthority {
  /** Whether each company's latest call was answered (authority/availability.ts). */
  readonly availability: AuthorityAvailability;
  readonly #readings = new Map<string, { settings: SandboxAuthoritySettings; offsetMinutes: number }>();
  #sandbox: SandboxAuthority | undefined;
  #wire: Promise<{ simulator: SefazSimulator; connector: SefazAuthority }> | undefined;
  #closed = false;

  constructor(
    private readonly mode: ServiceMode,
    private readonly store: SandboxStore,
    private readonly realNow: () => number = Date.now,
    private readonly production?: TaxAuthority,
    private readonly sandboxTransport: SandboxTransport = 'in-process',
    private readonly metrics?: ServiceMetrics,
  ) {
    this.availability = new AuthorityAvailability(realNow);
  }

  /** Creates the sandbox now (schemas compiled, simulator listening), so the first issuance does not pay for it. */
  warmUp(): void {
    if (this.mode !== 'sandbox') return;
    this.sandbox();
    if (this.sandboxTransport === 'wire') this.wire().catch(() => undefined);
  }

  /** Closes the sandbox's file (and the simulator, the connector); later calls answer "unavailable". For the app's last onClose. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#wire) {
      const wire = await this.#wire.catch(() => undefined);
      await wire?.connector.close();
      await wire?.simulator.close();
    }
    await this.#sandbox?.close();
    const production = this.production as (TaxAuthority & { close?: () => unknown }) | undefined;
    await production?.close?.();
  }

  private sandbox(): SandboxAuthority {
    return (this.#sandbox ??= new SandboxAuthority({
      memory: this.store.openSandboxAuthorityMemory(),
      settings: (companyId) => this.#readings.get(companyId)?.settings ?? { latencyMs: 0, available: true },
      clock: (companyId) => new Date(this.realNow() + (this.#readings.get(companyId)?.offsetMinutes ?? 0) * 60_000),
    }));
  }

  private wire(): Promise<{ simulator: SefazSimulator; connector: SefazAuthority }> {
    return (this.#wire ??= SefazSimulator.start({ authority: this.sandbox() }).then((simulator) => ({
      simulator,
      connector: new SefazAuthority({ origin: simulator.origin, extraCa: [simulator.caPem] }),
    })));
  }

  private async call<T>(operation: string, company: AuthorityCompany, fn: AuthorityCall<T>): Promise<T> {
    const started = performance.now();
    const took = () => (performance.now() - started) / 1000;
    try {
      const answer = await this.callAuthority(company, fn);
      this.availability.observe(company.id, true);
      this.metrics?.authorityCall(operation, 'answered', took());
      return answer;
    } catch (err) {
      const unavailable = err instanceof AuthorityUnavailableError;
      if (unavailable) this.availability.observe(company.id, false);
      this.metrics?.authorityCall(operation, unavailable ? 'unavailable' : 'error', took());
      throw err;
    }
  }

  /** An authorization's answer, counted by document and cStat (metrics.ts). */
  private counted<T extends { cStat: string }>(document: DocumentLabel, verdict: T): T {
    this.metrics?.authorization(document, verdict.cStat);
    return verdict;
  }

  private async callAuthority<T>(company: AuthorityCompany, fn: AuthorityCall<T>): Promise<T> {
    if (this.mode !== 'sandbox') {
      if (!this.production) throw new AuthorityUnavailableError('Nenhuma autoridade fiscal real configurada neste serviço');
      return fn(this.production);
    }
    const { authority: settings, offsetMinutes } = await this.store.getSandboxReading(company.id);
    this.#readings.set(company.id, { settings: { latencyMs: settings.latencyMs, available: settings.disponivel }, offsetMinutes });
    if (this.sandboxTransport === 'in-process') return fn(this.sandbox());
    if (this.#closed) throw new AuthorityUnavailableError('Autoridade fiscal simulada encerrada');
    const { simulator, connector } = await this.wire();
    simulator.enroll(company);
    return fn(connector);
  }

  nfeStatus: TaxAuthority['nfeStatus'] = (c) => this.call('nfeStatus', c, (a) => a.nfeStatus(c));
  authorizeNfe: TaxAuthority['authorizeNfe'] = async (c, xml) =>
    // The NFC-e is model 65; the other NF-e this service sends are model 55 (the returns).
    this.counted(/<mod>65<\/mod>/.test(xml) ? 'nfce' : 'nfe', await this.call('authorizeNfe', c, (a) => a.authorizeNfe(c, xml)));
  consultNfe: TaxAuthority['consultNfe'] = (c, key) => this.call('consultNfe', c, (a) => a.consultNfe(c, key));
  registerNfeEvent: TaxAuthority['registerNfeEvent'] = (c, xml) => this.call('registerNfeEvent', c, (a) => a.registerNfeEvent(c, xml));
  voidNfeNumbers: TaxAuthority['voidNfeNumbers'] = (c, xml) => this.call('voidNfeNumbers', c, (a) => a.voidNfeNumbers(c, xml));
  authorizeMdfe: TaxAuthority['authorizeMdfe'] = async (c, xml) => this.counted('mdfe', await this.call('authorizeMdfe', c, (a) => a.authorizeMdfe(c, xml)));
  consultMdfe: TaxAuthority['consultMdfe'] = (c, key) => this.call('consultMdfe', c, (a) => a.consultMdfe(c, key));
  registerMdfeEvent: TaxAuthority['registerMdfeEvent'] = (c, xml) => this.call('registerMdfeEvent', c, (a) => a.registerMdfeEvent(c, xml));
  openManifests: TaxAuthority['openManifests'] = (c) => this.call('openManifests', c, (a) => a.openManifests(c));
}
