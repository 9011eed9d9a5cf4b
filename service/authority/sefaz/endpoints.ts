// Where each web service lives: endpoints.json (the data, one file) read into a resolver that
// answers "the URL of service S for a company of UF U in environment E". An origin override
// (BALCAO_SEFAZ_URL / --sefaz-url) replaces scheme, host and port of every endpoint and keeps its
// path, so the same connector talks to the simulator, a proxy or a test double on the official
// paths.

import type { Environment } from '../../../fiscal/company.ts';
import { isUF } from '../../../fiscal/br/uf.ts';
import data from './endpoints.json' with { type: 'json' };
import { SERVICES, type Family, type ServiceName } from './services.ts';

type AuthorizerData = { homologacao: string; producao: string; paths: Record<string, string> };
type FamilyData = { authorizerOf: Record<string, string>; authorizers: Record<string, AuthorizerData> };

const TABLE: Record<Family, FamilyData> = { nfe: data.nfce, mdfe: data.mdfe };

export class EndpointError extends Error {
  override name = 'EndpointError';
}

/** The authorizer that serves a UF for a family (`SVRS`, `SP`, …). */
export function authorizerOf(family: Family, uf: string): string {
  if (!isUF(uf)) throw new EndpointError(`UF desconhecida: ${uf}`);
  const map = TABLE[family].authorizerOf;
  return map[uf] ?? map['*']!;
}

/**
 * `https://host:port` from an override such as `https://127.0.0.1:8443` (a path, query or
 * credentials in it are an error: only the origin is replaced). Only https: the connection
 * carries the company's certificate.
 */
export function parseOrigin(value: string, option = 'BALCAO_SEFAZ_URL'): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new EndpointError(`${option}: URL inválida (${value}); use por exemplo https://127.0.0.1:8443`);
  }
  if (url.protocol !== 'https:') throw new EndpointError(`${option}: deve começar com https:// (a conexão leva o certificado da empresa)`);
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || url.username || url.password) {
    throw new EndpointError(`${option}: informe só a origem (esquema, host e porta), sem caminho; o caminho oficial de cada serviço é mantido`);
  }
  return url.origin;
}

export type EndpointOptions = {
  /** Replaces the origin of every endpoint (see parseOrigin). */
  origin?: string;
};

/** The URL of a service for a company's UF and environment. */
export function endpointOf(service: ServiceName, uf: string, environment: Environment, options: EndpointOptions = {}): URL {
  const family = SERVICES[service].family;
  const authorizer = TABLE[family].authorizers[authorizerOf(family, uf)]!;
  const path = authorizer.paths[service];
  if (!path) throw new EndpointError(`o autorizador de ${uf} não tem o serviço ${service}`);
  const url = new URL(path, authorizer[environment]);
  if (options.origin) return new URL(url.pathname, parseOrigin(options.origin));
  return url;
}

/**
 * Every official path (lower case: the .asmx hosts ignore case) with the service it serves, for
 * the simulator. Throws if two services shared a path, which would make the table ambiguous.
 */
export function officialPaths(): Map<string, ServiceName> {
  const out = new Map<string, ServiceName>();
  for (const family of Object.values(TABLE)) {
    for (const authorizer of Object.values(family.authorizers)) {
      for (const base of [authorizer.homologacao, authorizer.producao]) {
        for (const [service, path] of Object.entries(authorizer.paths)) {
          const key = new URL(path, base).pathname.toLowerCase();
          const known = out.get(key);
          if (known && known !== service) throw new EndpointError(`caminho ${key} serve ${known} e ${service}`);
          out.set(key, service as ServiceName);
        }
      }
    }
  }
  return out;
}
