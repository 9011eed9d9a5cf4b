// How the service and `balcao sefaz status` find SEFAZ: the options of the command line
// (--sefaz-url, --sefaz-ca) over the environment (BALCAO_SEFAZ_URL, BALCAO_SEFAZ_CA,
// BALCAO_SEFAZ_TIMEOUT_MS). Errors name the option that carries the bad value.
//
// BALCAO_SEFAZ_CA is a PEM file (one or more certificates) added to Node's roots: the ICP-Brasil
// chain that signs the authorizers' server certificates, which Node does not ship (README,
// "SEFAZ real"). Verification itself cannot be turned off.

import { readFileSync } from 'node:fs';
import { parseOrigin } from './endpoints.ts';
import type { SefazAuthorityOptions } from './connector.ts';
import { DEFAULT_TIMEOUT_MS } from './transport.ts';

export class SefazConfigError extends Error {
  override name = 'SefazConfigError';
}

export type SefazSettings = { url?: string; ca?: string; timeoutMs?: string };

/** The connector's options from the given settings, falling back to the environment. */
export function sefazOptions(given: SefazSettings = {}, env: NodeJS.ProcessEnv = process.env): SefazAuthorityOptions {
  const url = given.url ?? (env.BALCAO_SEFAZ_URL || undefined);
  const urlOption = given.url !== undefined ? '--sefaz-url' : 'BALCAO_SEFAZ_URL';
  const caFile = given.ca ?? (env.BALCAO_SEFAZ_CA || undefined);
  const caOption = given.ca !== undefined ? '--sefaz-ca' : 'BALCAO_SEFAZ_CA';
  const timeoutText = given.timeoutMs ?? (env.BALCAO_SEFAZ_TIMEOUT_MS || undefined);

  let origin: string | undefined;
  if (url !== undefined) {
    try {
      origin = parseOrigin(url, urlOption);
    } catch (err) {
      throw new SefazConfigError((err as Error).message);
    }
  }
  const extraCa: string[] = [];
  if (caFile !== undefined) {
    let pem: string;
    try {
      pem = readFileSync(caFile, 'utf8');
    } catch (err) {
      throw new SefazConfigError(`${caOption}: não foi possível ler ${caFile} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    const certificates = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    if (certificates.length === 0) throw new SefazConfigError(`${caOption}: ${caFile} não contém certificados PEM (-----BEGIN CERTIFICATE-----)`);
    extraCa.push(...certificates);
  }
  let timeoutMs = DEFAULT_TIMEOUT_MS;
  if (timeoutText !== undefined) {
    timeoutMs = Number(timeoutText);
    if (!/^[0-9]+$/.test(timeoutText) || timeoutMs < 100 || timeoutMs > 300_000) {
      throw new SefazConfigError(`BALCAO_SEFAZ_TIMEOUT_MS inválido ("${timeoutText}"): informe milissegundos, de 100 a 300000`);
    }
  }
  return { ...(origin && { origin }), extraCa, timeoutMs };
}
