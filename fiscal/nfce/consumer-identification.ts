// NT 2026.002, rule W16-40 (rejection 750): an NFC-e above R$ 10.000,00, or above a lower limit
// the UF sets, must identify the consumer by CPF or CNPJ. The builder refuses such a request
// naming `dest` before anything is signed, the sandbox authority answers 750, and the checkout
// asks for the document before the sale can finish.
//
// No UF limit other than the national one is known to us (UNVERIFIED: the NT lets each UF set
// its own; see docs/fiscal.md). A UF that publishes one is a row in UF_LIMITS_CENTS.

import { formatBRL } from '../money.ts';

/** The national limit: R$ 10.000,00. */
export const NATIONAL_LIMIT_CENTS = 1_000_000n;

/** Limits set by a UF, in cents, where they differ from the national one. */
export const UF_LIMITS_CENTS: Readonly<Record<string, bigint>> = Object.freeze({});

/** Above this vNF (cents) the consumer's CPF or CNPJ is required in the UF. */
export function identificationLimitCents(uf: string | undefined): bigint {
  return (uf !== undefined && UF_LIMITS_CENTS[uf]) || NATIONAL_LIMIT_CENTS;
}

/** Whether an NFC-e of `vNF` cents in `uf` must carry the consumer's CPF or CNPJ. */
export function consumerIdentificationRequired(uf: string | undefined, vNFCents: bigint): boolean {
  return vNFCents > identificationLimitCents(uf);
}

/** The explanation shown to a cashier or returned to an integrator, in Portuguese. */
export function identificationRequiredMessage(uf: string | undefined): string {
  return `NFC-e acima de R$ ${formatBRL(identificationLimitCents(uf))} exige o CPF ou o CNPJ do consumidor (rejeição 750)`;
}
