// Where a company's webhook may point (docs/api.md, "Webhooks", "Destinations"). A store's own
// service runs inside the store's network, next to the system that receives its events: any
// address is fine there. A service that hosts many companies is another matter: a company's
// webhook could make it POST to the host's database port, an internal admin page or the cloud's
// metadata address (169.254.169.254). So the operator chooses, with BALCAO_WEBHOOK_DESTINOS:
//
// - `qualquer`: any address (the default of a service on one SQLite data folder listening on
//   loopback, as before);
// - `publicos`: public addresses only (the default of a service on PostgreSQL, --database, or
//   listening beyond loopback, --host);
// - a comma-separated list of networks (CIDR) or addresses: public addresses and those.
//
// A public address is a global unicast one (ipaddr.js's classification: not loopback, private,
// link-local, carrier-grade NAT, unique local, multicast, reserved or documentation ranges...);
// an IPv4 address written as IPv6 (::ffff:a.b.c.d) is judged as the IPv4 one, and the other
// forms that embed an IPv4 address (NAT64, 6to4, Teredo) are not public.
//
// The check is made when the webhook is set (every address its name resolves to) and again at
// each delivery, on the address the connection is made to (the lookup of the connection itself:
// `connectLookup`), so a name that resolves elsewhere afterwards (DNS rebinding) is refused too.

import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export const DESTINATIONS_ENV = 'BALCAO_WEBHOOK_DESTINOS';

export type DestinationPolicy =
  | { kind: 'any' }
  /** Public addresses, and those in `networks`. */
  | { kind: 'public'; networks: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][]; text: string };

export const ANY_DESTINATION: DestinationPolicy = Object.freeze({ kind: 'any' });

/** Where the service runs: what decides the default. */
export type Deployment = { sharedDatabase: boolean; beyondLoopback: boolean };

/** The policy BALCAO_WEBHOOK_DESTINOS says, or the deployment's default; a RangeError (Portuguese) when malformed. */
export function destinationPolicy(env: NodeJS.ProcessEnv, deployment: Deployment): DestinationPolicy {
  const text = env[DESTINATIONS_ENV]?.trim();
  if (!text) return deployment.sharedDatabase || deployment.beyondLoopback ? { kind: 'public', networks: [], text: 'publicos' } : ANY_DESTINATION;
  if (text === 'qualquer') return ANY_DESTINATION;
  if (text === 'publicos') return { kind: 'public', networks: [], text };
  const networks = text.split(',').map((part) => {
    const item = part.trim();
    try {
      return item.includes('/')
        ? ipaddr.parseCIDR(item)
        : ([ipaddr.parse(item), ipaddr.parse(item).kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number]);
    } catch {
      throw new RangeError(
        `${DESTINATIONS_ENV} inválido ("${item}"): use qualquer, publicos, ou uma lista de redes e endereços separados por vírgula ` +
          '(ex.: 10.20.0.0/16,192.168.0.50), permitidos além dos endereços públicos',
      );
    }
  });
  return { kind: 'public', networks, text };
}

/** Why `address` (an IP literal) is refused under `policy`; undefined when it is allowed. */
export function refusal(policy: DestinationPolicy, address: string): string | undefined {
  if (policy.kind === 'any') return undefined;
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/^\[|\]$/g, ''));
  } catch {
    return `endereço ${address} ilegível`;
  }
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (policy.networks.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits))) return undefined;
  const range = ip.range();
  if (range === 'unicast') return undefined;
  return `o endereço ${ip.toString()} não é público (${RANGE_NAMES[range] ?? range}); este serviço entrega webhooks só a endereços públicos (${DESTINATIONS_ENV}=${policy.text})`;
}

const RANGE_NAMES: Record<string, string> = {
  loopback: 'esta máquina',
  private: 'rede privada',
  linkLocal: 'link-local, como o endereço de metadados da nuvem',
  carrierGradeNat: 'NAT da operadora',
  uniqueLocal: 'rede privada IPv6',
  unspecified: 'não especificado',
  multicast: 'multicast',
  broadcast: 'broadcast',
  reserved: 'reservado',
};

export type Lookup = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemLookup: Lookup = (hostname, options, callback) => dnsLookup(hostname, options, callback);

/**
 * Why the URL is refused, resolving its name now (the check of PUT /webhook); undefined when
 * every address it resolves to is allowed. Under `any`, nothing is resolved.
 */
export async function urlRefusal(policy: DestinationPolicy, url: string, lookup: Lookup = systemLookup): Promise<string | undefined> {
  if (policy.kind === 'any') return undefined;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return refusal(policy, host);
  const addresses = await new Promise<LookupAddress[] | Error>((resolve) => lookup(host, { all: true }, (err, found) => resolve(err ?? found)));
  if (addresses instanceof Error) return `o nome ${host} não pôde ser resolvido (${(addresses as NodeJS.ErrnoException).code ?? addresses.message})`;
  for (const a of addresses) {
    const why = refusal(policy, a.address);
    if (why) return `${host} aponta para ${a.address}: ${why}`;
  }
  return undefined;
}

/** A refused destination met while connecting: the delivery fails with this message. */
export class DestinationRefused extends Error {
  override name = 'DestinationRefused';
  readonly code = 'EDESTINORECUSADO';
}

type ConnectLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/**
 * The `lookup` of the delivery's connections (undici's connect options → net.connect): resolves
 * as the system does and refuses, before connecting, any address the policy does not allow. The
 * address checked is the one connected to. (A URL that is an address is not looked up: the
 * delivery checks it with `refusal` first.)
 */
export function connectLookup(policy: DestinationPolicy, lookup: Lookup = systemLookup): ConnectLookup {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, options.all ? [] : '', undefined);
      const allowed = addresses.filter((a) => refusal(policy, a.address) === undefined);
      if (allowed.length === 0) {
        const first = addresses[0];
        const why = first ? refusal(policy, first.address) : `o nome ${hostname} não resolveu para nenhum endereço`;
        return callback(new DestinationRefused(`destino recusado: ${hostname} aponta para ${first?.address ?? '—'}: ${why}`), options.all ? [] : '', undefined);
      }
      if (options.all) return callback(null, allowed);
      return callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}
