// The IBS/CBS rates whoever runs the service sets once for all its companies (docs/fiscal.md,
// "Rates by date"; docs/api.md, "Operator"): read and replaced by `balcao ibscbs` and by
// GET/PUT /api/v1/operador/aliquotas-ibscbs, kept by the store (one row), read by every issuer
// (companies.ts) below the company's own rates. With them, whether next year's rates are known
// (fiscal/ibscbs/readiness.ts), which GET /readyz also reports.
//
// The API is the operator's, not a company's: it answers only a request bearing the operator's
// token (BALCAO_OPERATOR_TOKEN, at least 32 characters, given to the service at start), compared
// in constant time; without one configured it is off.

import { createHash, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { brasiliaDay } from '../base/common/brasilia.ts';
import { IssueCollector } from '../fiscal/errors.ts';
import { ratesWarning } from '../fiscal/ibscbs/readiness.ts';
import { checkRateOverrides, type RateOverride } from '../fiscal/ibscbs/rates.ts';
import { ApiError } from './http/errors.ts';
import { formatRatePeriods } from './ibscbs-options.ts';
import type { CompanyStore } from './store.ts';

/** What the command prints and the API answers. */
export type OperatorRatesView = {
  /** The periods as `balcao ibscbs aliquotas --periodos` writes them ("" when none). */
  aliquotas: string;
  periodos: RateOverride[];
  /** The warning of `data_referencia` in words, or null when every rate is stated. */
  aviso: string | null;
  data_referencia: string;
};

type RatesStore = Pick<CompanyStore, 'getOperatorRates' | 'setOperatorRates'>;

export function viewOf(periods: RateOverride[], today: string): OperatorRatesView {
  return {
    aliquotas: formatRatePeriods(periods),
    periodos: periods,
    aviso: ratesWarning(today, [], periods, 'operador')?.message ?? null,
    data_referencia: today,
  };
}

export async function operatorRates(store: RatesStore, now: Date): Promise<OperatorRatesView> {
  return viewOf(await store.getOperatorRates(), brasiliaDay(now));
}

/** Checks `periods` (issues under `field`), replaces the operator's rates, answers the new view. */
export async function replaceOperatorRates(store: RatesStore, periods: unknown, field: string, now: Date): Promise<OperatorRatesView> {
  const issues = new IssueCollector();
  const checked = checkRateOverrides(periods ?? [], field, issues);
  issues.throwIfAny();
  await store.setOperatorRates(checked!);
  return viewOf(checked!, brasiliaDay(now));
}

// ---------------------------------------------------------------------------------------------
// The operator's token

export const OPERATOR_TOKEN_MIN_LENGTH = 32;

/** The operator token's hash, or an Error (Portuguese) when the configured one is too short. */
export function operatorTokenHash(token: string | undefined): Buffer | undefined {
  if (token === undefined || token === '') return undefined;
  if (token.length < OPERATOR_TOKEN_MIN_LENGTH) throw new Error(`BALCAO_OPERATOR_TOKEN: use ao menos ${OPERATOR_TOKEN_MIN_LENGTH} caracteres`);
  return createHash('sha256').update(token).digest();
}

const BEARER = /^Bearer +(\S+)\s*$/i;

/** Throws 401 unless `authorization` bears the operator's token (the API is off without one). */
export function assertOperator(expected: Buffer | undefined, authorization: string | undefined): void {
  const headers = { 'www-authenticate': 'Bearer realm="balcao-operador"' };
  if (!expected) throw new ApiError('nao_autorizado', 'API do operador desativada: inicie o serviço com BALCAO_OPERATOR_TOKEN.', { headers });
  const token = BEARER.exec(authorization ?? '')?.[1];
  const presented = createHash('sha256')
    .update(token ?? '')
    .digest();
  if (!token || !timingSafeEqual(presented, expected)) throw new ApiError('nao_autorizado', 'Token do operador ausente ou inválido.', { headers });
}

// ---------------------------------------------------------------------------------------------
// The API's shapes (published in the OpenAPI document)

const Period = Type.Object(
  {
    from: Type.String({ description: 'Primeiro dia, AAAA-MM-DD' }),
    to: Type.Optional(Type.String({ description: 'Último dia, AAAA-MM-DD (ausente: sem fim)' })),
    pIBSUF: Type.Optional(Type.String({ description: 'Alíquota do IBS da UF, %, 2 a 4 casas' })),
    pIBSMun: Type.Optional(Type.String({ description: 'Alíquota do IBS do município, %' })),
    pCBS: Type.Optional(Type.String({ description: 'Alíquota da CBS, %' })),
  },
  { additionalProperties: false },
);

export const OperatorRatesBody = Type.Object(
  { periodos: Type.Array(Period, { description: 'Períodos; lista vazia remove todos' }) },
  { additionalProperties: false },
);

export const OperatorRatesAnswer = Type.Object({
  aliquotas: Type.String(),
  periodos: Type.Array(Period),
  aviso: Type.Union([Type.String(), Type.Null()]),
  data_referencia: Type.String(),
});
