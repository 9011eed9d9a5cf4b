// Shared by the terminal's cross-process tests: a valid CNPJ per test company (the sandbox
// authority keys numbers by CNPJ, so tests that must not share a numbering use their own), a
// company registered with a CSC, and a ready terminal on a temporary folder.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCompany, tempDataDir, type ServiceData } from './helpers/service-process.ts';
import { createTerminal, type Terminal, type TerminalOptions } from '../electron/core/terminal.ts';
import type { CompanyProfile, ContingencySettings } from '../electron/api/terminal-api.ts';
import { generateTestCertificate, type Certificate } from '../fiscal/certificate.ts';
import { demoEmitter } from '../fiscal/samples.ts';

/** A valid numeric CNPJ from a 12-digit base (mod-11 check digits). */
export function cnpjFrom(base12: string): string {
  const digits = base12.split('').map(Number);
  const dv = (weights: number[]) => {
    const sum = weights.reduce((s, w, i) => s + w * digits[i]!, 0);
    const r = sum % 11;
    return r < 2 ? 0 : 11 - r;
  };
  digits.push(dv([5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]));
  digits.push(dv([6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]));
  return digits.join('');
}

let companies = 0;

/** A company with CSC in the service's data folder, with a CNPJ no other test company has. */
export async function storeCompany(serviceDataDir: string): Promise<{ companyId: string; token: string; cnpj: string }> {
  const cnpj = cnpjFrom(`${String(process.pid % 100_000).padStart(5, '0')}${String(++companies).padStart(3, '0')}0001`);
  const created = await createCompany(serviceDataDir, { cnpj, 'csc-id': '1', csc: 'CSC-DE-TESTE-123456', nome: `Loja Terminal ${companies}` });
  return { ...created, cnpj };
}

/**
 * A terminal with the demo catalog, fast retries (tests wait for outcomes, not for backoff) and
 * its till open (no sale finishes without one), as a cashier leaves it at the start of the day.
 */
export async function testTerminal(options: Omit<TerminalOptions, 'dataDir'> & { dataDir?: string }): Promise<Terminal> {
  const terminal = await createTerminal({
    dataDir: options.dataDir ?? tempDataDir('balcao-terminal-'),
    retry: { baseMs: 50, capMs: 500, pollFirstMs: 20, pollBaseMs: 50, pollCapMs: 300, ...options.retry },
    healthIntervalMs: 500,
    ...options,
  });
  terminal.seedDemoCatalog();
  await openTill(terminal);
  return terminal;
}

/** Opens the till (float R$ 0,00) unless it is open already. */
export async function openTill(terminal: Terminal): Promise<void> {
  if (!(await terminal.cashSession())) await terminal.openCashSession({ floatCents: 0, operator: 'Caixa de teste' });
}

/** Polls `probe` until it returns something truthy. */
export async function eventually<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`tempo esgotado esperando: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// ---- Offline contingency ----------------------------------------------------------------------

/** A company with CSC AND its A1 certificate at the service, plus what a terminal needs to issue for it offline. */
export async function storeCompanyWithCertificate(serviceDataDir: string | ServiceData): Promise<{
  companyId: string;
  token: string;
  cnpj: string;
  pfx: Buffer;
  password: string;
  certificate: Certificate;
  profile: CompanyProfile & { cscToken: string };
}> {
  const cnpj = cnpjFrom(`${String(process.pid % 100_000).padStart(5, '0')}${String(++companies).padStart(3, '0')}0001`);
  const nome = `LOJA CONTINGENCIA ${companies}`;
  const password = 'senha-do-certificado';
  const { pfx, certificate } = generateTestCertificate({ cnpj, xNome: nome, password });
  const pfxFile = join(tempDataDir('balcao-pfx-'), 'empresa.pfx');
  writeFileSync(pfxFile, pfx);
  const created = await createCompany(serviceDataDir, {
    cnpj,
    uf: 'SP',
    nome,
    'csc-id': '1',
    csc: 'CSC-DE-TESTE-123456',
    certificado: pfxFile,
    senha: password,
  });
  const demo = demoEmitter({ cnpj });
  const profile = {
    cnpj,
    ie: demo.ie,
    xNome: nome,
    address: { ...demo.address },
    crt: demo.crt,
    environment: 'homologacao' as const,
    qrCodeVersion: 2 as const,
    cscId: '1',
    cscToken: 'CSC-DE-TESTE-123456',
  };
  return { ...created, cnpj, pfx, password, certificate, profile };
}

/** Stores the company profile, CSC and certificate in the terminal (the manager's settings screen). */
export async function setUpContingency(
  terminal: Terminal,
  company: Awaited<ReturnType<typeof storeCompanyWithCertificate>>,
  auth: { managerId: string; pin: string },
  contingency: Partial<ContingencySettings> = {},
): Promise<void> {
  await terminal.updateSettings({ company: company.profile, contingency }, auth);
  await terminal.importCertificate({ ...auth, pfxBase64: company.pfx.toString('base64'), password: company.password });
}
