// The terminal's settings, kept in its database: the issuance service (URL and token), the
// series, the printer, the company profile with its CSC, the A1 certificate, the offline
// contingency limits, and how the store's scales print their labels.
//
// Where a value comes from: the options the terminal is created with (serviceUrl, token,
// series) only SEED the settings of a data directory opened for the first time; from then on
// the stored settings win and the manager changes them here (updateSettings). An unreadable
// stored token (the secret key was replaced) is replaced by the token of the options, if any.
//
// Secrets (the service token, the CSC token, the certificate .pfx and its password) are sealed
// by the SecretBox before they reach the database, never returned to the screen (tokenSet,
// cscSet) and never written to the audit log.

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { loadPfx, type Certificate } from '../../fiscal/certificate.ts';
import type { Emitter } from '../../fiscal/company.ts';
import { FieldError } from '../../fiscal/errors.ts';
import type { TechnicalResponsible } from '../../fiscal/resp-tec.ts';
import type {
  CashSettings,
  CertificateView,
  CompanyProfile,
  ContingencySettings,
  PixSettings,
  PrinterSettings,
  RetentionSettings,
  ScaleLabelSettings,
  SettingsPatch,
  TerminalSettings,
} from '../api/terminal-api.ts';
import { DEFAULT_SERVICE_URL, type TerminalClaimed } from './api-client.ts';
import { emitterOf, validateCompanyProfile, validateCscToken } from './company-profile.ts';
import { TerminalError } from './errors.ts';
import type { PosStore } from './pos-store.ts';
import { normalizeFingerprint } from './pinned-tls.ts';
import { DEFAULT_PRINTER_SETTINGS, validatePrinterSettings } from './printing.ts';
import { DEFAULT_SCALE_LABEL_SETTINGS, validateScaleLabelSettings } from './scale-label.ts';
import { iso, type Clock } from '../../base/common/clock.ts';
import { terminalSecretPurpose, type SecretSealer } from './secret-box.ts';
import { formatDateBR } from '../../base/common/brasilia.ts';
import { pixKeyProblem } from '../../base/common/pix/br-code.ts';

export const DEFAULT_SERIES = 1;

/** Every sangria and suprimento asks for the manager's PIN until the manager sets a limit. */
export const DEFAULT_CASH_SETTINGS: Readonly<CashSettings> = Object.freeze({ pinAboveCents: 0 });

/**
 * Three months of documents at the checkout: well past the cancellation window, the 24 hours of
 * a contingency receipt, a month's closing and the returns customers bring back (up to 90 days
 * for a defect, CDC art. 26); the service keeps everything five years.
 */
export const DEFAULT_RETENTION_SETTINGS: Readonly<RetentionSettings> = Object.freeze({ days: 90 });

export const DEFAULT_CONTINGENCY_SETTINGS: Readonly<ContingencySettings> = Object.freeze({
  failureThreshold: 3,
  maxReceipts: 500,
  maxHours: 24,
  series: null,
});

/** The stored certificate's facts (the .pfx and its password are secrets). */
type CertificateFacts = { subject: string; cnpj: string; notAfter: string; fingerprint256: string };

type StoredCompany = Omit<CompanyProfile, 'cscSet'>;

/** This checkout as the service knows it (PUT /api/v1/terminais/{id}). */
type TerminalIdentity = { id: string; name: string };

/** What a settings change touched, for the terminal to apply live. */
export type SettingsChange = {
  terminalName?: string;
  serviceUrl?: string;
  serviceFingerprint?: string | null;
  token?: string;
  series?: number;
  cash?: boolean;
  retention?: RetentionSettings;
  printer?: PrinterSettings;
  company?: boolean;
  contingency?: boolean;
  scaleLabels?: ScaleLabelSettings;
  pix?: PixSettings;
};

/** What offline contingency needs to sign and issue by itself. */
export type ContingencyCredentials = { emitter: Emitter; certificate: Certificate };

const bad = (field: string, message: string) => new TerminalError('configuracao_invalida', message, { field });

const LOOPBACK = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/i;

/**
 * http:// or https:// without credentials, query or fragment. Plain http:// only to this machine
 * (the embedded service): the token goes in every request and must never cross the store's
 * network in clear.
 */
export function validateServiceUrl(value: unknown, field = 'serviceUrl'): string {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' && value.length <= 2048 ? new URL(value.trim()) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) {
    throw bad(field, 'Endereço do serviço de emissão inválido: use http:// ou https:// (ex.: http://127.0.0.1:8765)');
  }
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname)) {
    throw bad(field, 'Serviço em outra máquina só por https:// (o token não pode passar pela rede da loja sem criptografia), ex.: https://192.168.0.10:8765');
  }
  return url.href.replace(/\/+$/, '');
}

/** A certificate fingerprint (SHA-256, 64 hex digits, with or without ":"), as `AB:CD:…`; null removes it. */
export function validateFingerprint(value: unknown, field = 'serviceFingerprint'): string | null {
  if (value === null || value === '') return null;
  const normalized = typeof value === 'string' ? normalizeFingerprint(value) : undefined;
  if (!normalized)
    throw bad(field, 'Impressão digital do certificado: SHA-256 com 64 dígitos hexadecimais (ex.: 1E:AF:16:…), como o serviço mostra ao iniciar');
  return normalized;
}

export function validateTerminalName(value: unknown, field = 'terminalName'): string {
  const name = typeof value === 'string' ? value.trim().replace(/\s+/g, ' ') : '';
  if (name.length < 1 || name.length > 60) throw bad(field, 'Nome deste caixa: de 1 a 60 caracteres (ex.: Caixa 2)');
  return name;
}

export function validateCash(value: unknown, field = 'cash'): CashSettings {
  const p = (typeof value === 'object' && value !== null ? value : {}) as Partial<Record<keyof CashSettings, unknown>>;
  const limit = p.pinAboveCents;
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0 || limit > 100_000_000) {
    throw bad(`${field}.pinAboveCents`, 'Limite sem PIN de sangria e suprimento: valor em centavos de R$ 0,00 a R$ 1.000.000,00');
  }
  return { pinAboveCents: limit };
}

export function validateRetention(value: unknown, field = 'retention'): RetentionSettings {
  const p = (typeof value === 'object' && value !== null ? value : {}) as Partial<Record<keyof RetentionSettings, unknown>>;
  return { days: intIn(p.days, `${field}.days`, 7, 1825, 'Dias de documentos guardados neste caixa') };
}

/** The store's PIX key (docs/pix.md): trimmed; a CPF or CNPJ key typed with its mask is unmasked. */
export function validatePix(value: unknown, field = 'pix'): PixSettings {
  const raw = typeof value === 'object' && value !== null ? (value as { key?: unknown }).key : undefined;
  if (raw === null || raw === undefined || raw === '') return { key: null };
  if (typeof raw !== 'string') throw bad(`${field}.key`, 'Chave PIX: texto');
  const typed = raw.trim();
  const unmasked = /^[0-9A-Za-z./-]+$/.test(typed) && /[./-]/.test(typed) && !/[a-z]/.test(typed) ? typed.replace(/[./-]/g, '') : typed;
  const problem = pixKeyProblem(unmasked);
  if (problem) throw bad(`${field}.key`, problem);
  return { key: unmasked };
}

export function validateToken(value: unknown, field = 'token'): string {
  if (typeof value !== 'string' || !/^[\x21-\x7e]{1,512}$/.test(value)) throw bad(field, 'Token de acesso ao serviço: de 1 a 512 caracteres, sem espaços');
  return value;
}

export function validateSeries(value: unknown, field = 'series'): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 999) throw bad(field, 'Série deve ser um número inteiro de 0 a 999');
  return value;
}

function intIn(value: unknown, field: string, min: number, max: number, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw bad(field, `${what}: inteiro de ${min} a ${max}`);
  return value;
}

export function validateContingency(patch: unknown, current: ContingencySettings): ContingencySettings {
  if (typeof patch !== 'object' || patch === null) throw bad('contingency', 'Configuração da contingência ausente');
  const p = patch as Partial<Record<keyof ContingencySettings, unknown>>;
  return {
    failureThreshold:
      p.failureThreshold === undefined
        ? current.failureThreshold
        : intIn(p.failureThreshold, 'contingency.failureThreshold', 1, 100, 'Falhas seguidas para entrar em contingência'),
    maxReceipts:
      p.maxReceipts === undefined ? current.maxReceipts : intIn(p.maxReceipts, 'contingency.maxReceipts', 1, 100_000, 'Máximo de NFC-e em contingência'),
    // The authority gives 24 hours from emission to transmit a contingency receipt.
    maxHours: p.maxHours === undefined ? current.maxHours : intIn(p.maxHours, 'contingency.maxHours', 1, 24, 'Máximo de horas em contingência'),
    series: p.series === undefined ? current.series : p.series === null ? null : intIn(p.series, 'contingency.series', 0, 999, 'Série da contingência'),
  };
}

const CERTIFICATE_FIELDS: Readonly<Record<string, string>> = { senha: 'password', certificado: 'pfxBase64' };

/** loadPfx's FieldError as the screen's `certificado_invalido`, naming the input. */
function certificateError(err: unknown): unknown {
  if (!(err instanceof FieldError)) return err;
  const issue = err.issues[0]!;
  const message = issue.message.charAt(0).toUpperCase() + issue.message.slice(1);
  return new TerminalError('certificado_invalido', message, { field: CERTIFICATE_FIELDS[issue.field] ?? 'pfxBase64' });
}

export type SettingsOptions = {
  store: PosStore;
  clock: Clock;
  box: SecretSealer;
  /** First-open values (TerminalOptions). */
  seed: { serviceUrl?: string; token?: string; series?: number; serviceFingerprint?: string | null; pixKey?: string };
};

/** The checkout's default name: the computer's. */
function defaultTerminalName(): string {
  const name = hostname().trim().slice(0, 60);
  return name === '' ? 'Caixa' : name;
}

/** A validated settings change, written by `commit()` once the manager is authorized. */
export type PreparedSettings = {
  /** What the settings will be that the service must agree with (the series a checkout claims). */
  after: {
    terminal: TerminalIdentity;
    serviceUrl: string;
    serviceFingerprint: string | null;
    token: string;
    series: number;
    contingencySeries: number | null;
  };
  /** The change touches what the service knows of this checkout (its series, name, or the service itself). */
  touchesSeries: boolean;
  commit: () => { change: SettingsChange; audit: Record<string, unknown> };
};

export class Settings {
  private readonly store: PosStore;
  private readonly clock: Clock;
  private readonly box: SecretSealer;
  private loaded: { fingerprint: string; certificate: Certificate } | undefined;

  constructor(options: SettingsOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.box = options.box;
    this.seed(options.seed);
  }

  private seed(seed: SettingsOptions['seed']): void {
    const serviceUrl = seed.serviceUrl === undefined ? undefined : validateServiceUrl(seed.serviceUrl);
    const token = seed.token === undefined ? undefined : validateToken(seed.token);
    const series = seed.series === undefined ? undefined : validateSeries(seed.series);
    const fingerprint = seed.serviceFingerprint === undefined ? undefined : validateFingerprint(seed.serviceFingerprint);
    const pix = seed.pixKey === undefined ? undefined : validatePix({ key: seed.pixKey }, 'BALCAO_PIX_CHAVE');
    const at = iso(this.clock());
    this.store.transaction(() => {
      // The checkout's own id, made once: the service knows it by it (its series).
      if (this.json('terminal') === undefined) this.put('terminal', { id: randomUUID(), name: defaultTerminalName() }, at);
      if (this.json('service_url') === undefined) this.put('service_url', serviceUrl ?? DEFAULT_SERVICE_URL, at);
      if (this.json('service_fingerprint') === undefined && fingerprint !== undefined) this.put('service_fingerprint', fingerprint, at);
      if (this.json('series') === undefined && series !== undefined) this.put('series', series, at);
      if (this.json('pix') === undefined && pix !== undefined) this.put('pix', pix, at);
      if (token !== undefined && this.readableSecret('token') === undefined) this.putSecret('token', Buffer.from(token), at);
    });
  }

  // -------------------------------------------------------------------------------------------
  // Reading

  private json<T>(key: string): T | undefined {
    const raw = this.store.settings.settingValue(key);
    return raw === undefined ? undefined : (JSON.parse(raw) as T);
  }

  private put(key: string, value: unknown, at: string): void {
    this.store.settings.putSetting(key, JSON.stringify(value), at);
  }

  private putSecret(name: string, plain: Buffer, at: string): void {
    this.store.settings.putSealedSecret(name, this.box.seal(plain, terminalSecretPurpose(name)), at);
  }

  /** The secret in clear; undefined when absent or when this box cannot open it. */
  private readableSecret(name: string): Buffer | undefined {
    const sealed = this.store.settings.sealedSecret(name);
    if (sealed === undefined) return undefined;
    try {
      return this.box.open(sealed, terminalSecretPurpose(name));
    } catch {
      return undefined;
    }
  }

  get serviceUrl(): string {
    return this.json<string>('service_url') ?? DEFAULT_SERVICE_URL;
  }

  /** The pinned fingerprint of the service's certificate, or null. */
  get serviceFingerprint(): string | null {
    return this.json<string | null>('service_fingerprint') ?? null;
  }

  get terminal(): TerminalIdentity {
    return this.json<TerminalIdentity>('terminal')!;
  }

  /** What the service last confirmed this checkout holds: its id, the service and the series. */
  get seriesClaim(): { terminalId: string; serviceUrl: string; series: number[] } | null {
    return this.json<{ terminalId: string; serviceUrl: string; series: number[] }>('series_claim') ?? null;
  }

  /**
   * The service's technical responsible, as its claim answer gave it (series-registry.ts): written
   * in the receipts this checkout signs in contingency; the CSRT sealed like the CSC.
   */
  setTechnicalResponsible(rt: TerminalClaimed['responsavel_tecnico']): void {
    const at = iso(this.clock());
    this.store.transaction(() => {
      this.put(
        'technical_responsible',
        rt ? { cnpj: rt.cnpj, contact: rt.contato, email: rt.email, phone: rt.telefone, csrtId: rt.csrt?.id ?? null } : null,
        at,
      );
      if (rt?.csrt) this.putSecret('csrt', Buffer.from(rt.csrt.token), at);
      else if (this.store.settings.sealedSecret('csrt')) this.store.settings.deleteSecret('csrt');
    });
  }

  /** The technical responsible this checkout writes, CSRT in clear; undefined when none (or its CSRT cannot be read). */
  get technicalResponsible(): TechnicalResponsible | undefined {
    const stored = this.json<(Omit<TechnicalResponsible, 'csrt'> & { csrtId: number | null }) | null>('technical_responsible');
    if (!stored) return undefined;
    const { csrtId, ...contact } = stored;
    if (csrtId === null) return contact;
    const token = this.readableSecret('csrt')?.toString('utf8');
    return token === undefined ? undefined : { ...contact, csrt: { id: csrtId, token } };
  }

  /** The service confirmed `series` as this checkout's (series-registry.ts). */
  confirmSeriesClaim(claim: { terminalId: string; serviceUrl: string; series: number[] }): void {
    this.store.transaction(() => this.put('series_claim', claim, iso(this.clock())));
  }

  get cash(): CashSettings {
    return { ...DEFAULT_CASH_SETTINGS, ...this.json<Partial<CashSettings>>('cash') };
  }

  get retention(): RetentionSettings {
    return { ...DEFAULT_RETENTION_SETTINGS, ...this.json<Partial<RetentionSettings>>('retention') };
  }

  get pix(): PixSettings {
    return this.json<PixSettings>('pix') ?? { key: null };
  }

  /** The service token; '' when none is configured (nothing can be sent until the manager sets one). */
  get token(): string {
    return this.readableSecret('token')?.toString('utf8') ?? '';
  }

  /** Series 1 until one is configured. */
  get series(): number {
    return this.json<number>('series') ?? DEFAULT_SERIES;
  }

  get printer(): PrinterSettings {
    return this.json<PrinterSettings>('printer') ?? { ...DEFAULT_PRINTER_SETTINGS };
  }

  company(): StoredCompany | null {
    return this.json<StoredCompany>('company') ?? null;
  }

  certificate(): CertificateView {
    const c = this.json<CertificateFacts>('certificate');
    return c ? { subject: c.subject, cnpj: c.cnpj, notAfter: c.notAfter } : null;
  }

  contingencySettings(): ContingencySettings {
    return { ...DEFAULT_CONTINGENCY_SETTINGS, ...this.json<Partial<ContingencySettings>>('contingency') };
  }

  /** How the store's scales print their labels; off until the manager sets it. */
  scaleLabels(): ScaleLabelSettings {
    return this.json<ScaleLabelSettings>('scale_labels') ?? { ...DEFAULT_SCALE_LABEL_SETTINGS };
  }

  /** What the screen sees: no token, no CSC, no certificate secrets. */
  view(): TerminalSettings {
    const company = this.company();
    return {
      terminal: this.terminal,
      serviceUrl: this.serviceUrl,
      serviceFingerprint: this.serviceFingerprint,
      tokenSet: this.token !== '',
      series: this.series,
      printer: this.printer,
      company: company && { ...company, cscSet: this.store.settings.sealedSecret('csc_token') !== undefined },
      certificate: this.certificate(),
      contingency: this.contingencySettings(),
      scaleLabels: this.scaleLabels(),
      cash: this.cash,
      retention: this.retention,
      pix: this.pix,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Changing

  /**
   * Validates the whole patch (nothing is written when any field is wrong) and returns the
   * write, to be committed once the manager is authorized: `commit()` writes it in one
   * transaction and returns what changed and the audit's description of it (no secrets).
   */
  prepare(patch: SettingsPatch): PreparedSettings {
    if (typeof patch !== 'object' || patch === null) throw bad('patch', 'Nada a alterar');
    const change: SettingsChange = {};
    if (patch.terminalName !== undefined) change.terminalName = validateTerminalName(patch.terminalName);
    if (patch.serviceUrl !== undefined) change.serviceUrl = validateServiceUrl(patch.serviceUrl);
    if (patch.serviceFingerprint !== undefined) change.serviceFingerprint = validateFingerprint(patch.serviceFingerprint);
    const cash = patch.cash === undefined ? undefined : validateCash(patch.cash);
    if (patch.token !== undefined) change.token = validateToken(patch.token);
    if (patch.series !== undefined) change.series = validateSeries(patch.series);
    if (patch.printer !== undefined) change.printer = validatePrinterSettings(patch.printer);
    if (patch.scaleLabels !== undefined) change.scaleLabels = validateScaleLabelSettings(patch.scaleLabels);
    if (patch.retention !== undefined) change.retention = validateRetention(patch.retention);
    if (patch.pix !== undefined) change.pix = validatePix(patch.pix);
    const contingency = patch.contingency === undefined ? undefined : validateContingency(patch.contingency, this.contingencySettings());
    let company: StoredCompany | undefined;
    let cscToken: string | undefined;
    const before = this.company();
    if (patch.company !== undefined) {
      company = validateCompanyProfile(patch.company);
      if (patch.company.cscToken !== undefined && patch.company.cscToken !== null && patch.company.cscToken !== '') {
        cscToken = validateCscToken(patch.company.cscToken);
        if (company.cscId === null) throw bad('company.cscId', 'Identificador do CSC: obrigatório junto com o CSC');
      } else if (
        company.cscId !== null &&
        (company.cscId !== before?.cscId || company.cnpj !== before?.cnpj || !this.store.settings.sealedSecret('csc_token'))
      ) {
        throw bad('company.cscToken', 'CSC: informe o código junto com o novo identificador');
      }
    }
    const after = {
      terminal: { id: this.terminal.id, name: change.terminalName ?? this.terminal.name },
      serviceUrl: change.serviceUrl ?? this.serviceUrl,
      serviceFingerprint: change.serviceFingerprint !== undefined ? change.serviceFingerprint : this.serviceFingerprint,
      token: change.token ?? this.token,
      series: change.series ?? this.series,
      contingencySeries: contingency !== undefined ? contingency.series : this.contingencySettings().series,
    };
    const claims =
      change.terminalName !== undefined ||
      change.serviceUrl !== undefined ||
      change.serviceFingerprint !== undefined ||
      change.token !== undefined ||
      change.series !== undefined ||
      (contingency !== undefined && contingency.series !== this.contingencySettings().series);
    return { after, touchesSeries: claims, commit: () => this.commit(change, contingency, company, cscToken, cash) };
  }

  private commit(
    change: SettingsChange,
    contingency: ContingencySettings | undefined,
    company: StoredCompany | undefined,
    cscToken: string | undefined,
    cash: CashSettings | undefined,
  ): { change: SettingsChange; audit: Record<string, unknown> } {
    const audit: Record<string, unknown> = {};
    const before = this.company();
    const at = iso(this.clock());
    this.store.transaction(() => {
      if (change.terminalName !== undefined) {
        audit.terminalName = { antes: this.terminal.name, depois: change.terminalName };
        this.put('terminal', { ...this.terminal, name: change.terminalName }, at);
      }
      if (change.serviceFingerprint !== undefined) {
        audit.serviceFingerprint = { antes: this.serviceFingerprint, depois: change.serviceFingerprint };
        this.put('service_fingerprint', change.serviceFingerprint, at);
      }
      if (cash !== undefined) {
        audit.cash = { antes: this.cash, depois: cash };
        this.put('cash', cash, at);
        change.cash = true;
      }
      if (change.serviceUrl !== undefined) {
        audit.serviceUrl = { antes: this.serviceUrl, depois: change.serviceUrl };
        this.put('service_url', change.serviceUrl, at);
      }
      if (change.token !== undefined) {
        audit.token = 'alterado';
        this.putSecret('token', Buffer.from(change.token), at);
      }
      if (change.series !== undefined) {
        audit.series = { antes: this.series, depois: change.series };
        this.put('series', change.series, at);
      }
      if (change.printer !== undefined) {
        audit.printer = { antes: this.printer, depois: change.printer };
        this.put('printer', change.printer, at);
      }
      if (change.retention !== undefined) {
        audit.retention = { antes: this.retention, depois: change.retention };
        this.put('retention', change.retention, at);
      }
      if (change.pix !== undefined) {
        audit.pix = { antes: this.pix, depois: change.pix };
        this.put('pix', change.pix, at);
      }
      if (change.scaleLabels !== undefined) {
        audit.scaleLabels = { antes: this.scaleLabels(), depois: change.scaleLabels };
        this.put('scale_labels', change.scaleLabels, at);
      }
      if (contingency !== undefined) {
        audit.contingency = { antes: this.contingencySettings(), depois: contingency };
        this.put('contingency', contingency, at);
        change.contingency = true;
      }
      if (company !== undefined) {
        audit.company = { antes: before, depois: company };
        this.put('company', company, at);
        change.company = true;
        if (cscToken !== undefined) {
          audit.cscToken = 'alterado';
          this.putSecret('csc_token', Buffer.from(cscToken), at);
        } else if (company.cscId === null && this.store.settings.sealedSecret('csc_token')) {
          audit.cscToken = 'removido';
          this.store.settings.deleteSecret('csc_token');
        }
        // The certificate belongs to one CNPJ: another company's certificate cannot stay.
        const cert = this.json<CertificateFacts>('certificate');
        if (cert && cert.cnpj !== company.cnpj) {
          audit.certificate = { removido: { cnpj: cert.cnpj, subject: cert.subject } };
          this.removeCertificate();
        }
      }
    });
    return { change, audit };
  }

  private removeCertificate(): void {
    this.store.settings.deleteSetting('certificate');
    this.store.settings.deleteSecret('certificate_pfx');
    this.store.settings.deleteSecret('certificate_password');
    this.loaded = undefined;
  }

  /**
   * Loads an A1 certificate for the company: refused (`certificado_invalido`, naming `password`
   * or `pfxBase64`) when the password is wrong, the file unreadable, the certificate expired or
   * not yet valid, or of another CNPJ. Stored sealed. Nothing is written when refused.
   */
  checkCertificate(pfxBase64: unknown, password: unknown): { pfx: Buffer; password: string; certificate: Certificate } {
    const company = this.company();
    if (!company) throw bad('company', 'Cadastre os dados da empresa (CNPJ) antes de importar o certificado');
    if (typeof pfxBase64 !== 'string' || pfxBase64 === '' || pfxBase64.length > 1_000_000 || !/^[A-Za-z0-9+/=\s]+$/.test(pfxBase64)) {
      throw new TerminalError('certificado_invalido', 'Arquivo do certificado ausente ou inválido (esperado um .pfx/.p12 em base64)', { field: 'pfxBase64' });
    }
    if (typeof password !== 'string') throw new TerminalError('certificado_invalido', 'Informe a senha do certificado', { field: 'password' });
    const pfx = Buffer.from(pfxBase64, 'base64');
    try {
      const certificate = loadPfx(pfx, password, { expectedCnpj: company.cnpj, now: new Date(this.clock()) });
      return { pfx, password, certificate };
    } catch (err) {
      throw certificateError(err);
    }
  }

  storeCertificate(checked: { pfx: Buffer; password: string; certificate: Certificate }): CertificateView {
    const { certificate } = checked;
    const facts: CertificateFacts = {
      subject: certificate.subject,
      cnpj: certificate.cnpj,
      notAfter: certificate.notAfter.toISOString(),
      fingerprint256: certificate.fingerprint256,
    };
    const at = iso(this.clock());
    this.store.transaction(() => {
      this.putSecret('certificate_pfx', checked.pfx, at);
      this.putSecret('certificate_password', Buffer.from(checked.password, 'utf8'), at);
      this.put('certificate', facts, at);
    });
    this.loaded = { fingerprint: facts.fingerprint256, certificate };
    return this.certificate();
  }

  // -------------------------------------------------------------------------------------------
  // Contingency

  /**
   * The emitter (company profile + CSC) and the certificate to issue offline, or the reason,
   * in Portuguese, why this terminal cannot.
   */
  credentials(): { credentials: ContingencyCredentials } | { reason: string } {
    const company = this.company();
    if (!company) return { reason: 'Dados da empresa não cadastrados neste terminal' };
    const cscToken = this.readableSecret('csc_token')?.toString('utf8');
    if (!company.cscId || !cscToken) return { reason: 'CSC da empresa não cadastrado neste terminal' };
    const facts = this.json<CertificateFacts>('certificate');
    if (!facts) return { reason: 'Certificado digital não instalado neste terminal' };
    if (this.loaded?.fingerprint !== facts.fingerprint256) {
      const pfx = this.readableSecret('certificate_pfx');
      const password = this.readableSecret('certificate_password');
      if (!pfx || !password) return { reason: 'O certificado guardado não pode ser lido; importe-o de novo' };
      try {
        // Parsed once (tens of milliseconds); its validity is checked below on every use.
        const notAfter = new Date(facts.notAfter);
        this.loaded = {
          fingerprint: facts.fingerprint256,
          certificate: loadPfx(pfx, password.toString('utf8'), {
            expectedCnpj: company.cnpj,
            now: new Date(Math.min(this.clock(), notAfter.getTime() - 1000)),
          }),
        };
      } catch (err) {
        return { reason: `Certificado guardado inválido: ${(err as Error).message}` };
      }
    }
    const certificate = this.loaded.certificate;
    const now = this.clock();
    if (now > certificate.notAfter.getTime()) return { reason: `Certificado digital vencido em ${formatDateBR(certificate.notAfter)}` };
    if (now < certificate.notBefore.getTime()) return { reason: 'Certificado digital ainda não é válido' };
    const respTec = this.technicalResponsible;
    return { credentials: { emitter: { ...emitterOf(company, { id: company.cscId, token: cscToken }), ...(respTec && { respTec }) }, certificate } };
  }

  /** The credentials, or null when missing (see `credentials()` for the reason). */
  contingencyCredentials(): ContingencyCredentials | null {
    const c = this.credentials();
    return 'credentials' in c ? c.credentials : null;
  }
}
