// The law as dated data: every rule Balcão applies that starts or ends on a date, one row each, with
// its source. The builders (fiscal/) and the sandbox authority (service/authority/) read these rows
// through fiscal/law/in-force.ts, by the date of the document's dhEmi; docs/fiscal.md lists them
// ("The law by date", written from this table by `npm run docs:law`, kept so by a test).
//
// A new technical note is a new row (or a new `until` on an old one), never a date written in the
// code that applies it. Rows whose facts belong to a payment method (a code's validity, the day a
// card rule began to cover it) are written in base/common/payment-methods.ts, which the screen
// reads too, and listed here from there.
//
// Dates are calendar days, first and last in force, inclusive. A row with an `environment` holds in
// that environment only; a rule that holds in homologação from one day and in produção from another
// is two rows. Confidence follows the reference notes: HIGH (read in a primary artefact), MEDIUM
// (two secondary sources agree), LOW (one), UNVERIFIED (our decision, in docs/fiscal.md).

import { PAYMENT_METHODS } from '../../base/common/payment-methods.ts';

export type Environment = 'homologacao' | 'producao';
export type Confidence = 'HIGH' | 'MEDIUM' | 'LOW' | 'UNVERIFIED';

/** The rules that change with time. */
export type LawRule =
  /** The reform's groups (IBSCBS, IBSCBSTot, vItem, vNFTot) exist. */
  | 'ibscbs-grupos'
  /** Rejection 1115 (UB12-10): a CRT 3 item without IBSCBS. */
  | 'ibscbs-rejeicao-1115'
  /** The published IBS/CBS rates of a period. */
  | 'ibscbs-aliquotas'
  /** The rates a document carries when nobody gives one the law fixes but has not published. */
  | 'ibscbs-aliquotas-provisorias'
  /** vProd contains the IBS and CBS (the base is taken out of the price). */
  | 'ibscbs-no-preco'
  /** An alphanumeric CNPJ (and the access key, QR Code and Ids that carry it) is accepted. */
  | 'cnpj-alfanumerico'
  /** A payment code (tPag) exists. */
  | 'tpag'
  /** A payment method needs the card group (YA04-10, rejection 391). */
  | 'tpag-grupo-cartao'
  /** The NF-e/NFC-e of an emitter in one of the row's UFs must carry infRespTec (ZD01-10, rejection 972). */
  | 'resp-tec-obrigatorio';

type RowBase = {
  rule: LawRule;
  /** What holds while the row is in force, for people (docs/fiscal.md). */
  what: string;
  from?: string;
  until?: string;
  environment?: Environment;
  source: string;
  confidence: Confidence;
};

/** Percent as the layout writes it; null: fixed by law ("the rate in force") but not published yet. */
export type PublishedRates = { pIBSUF: string | null; pIBSMun: string | null; pCBS: string | null };

export type RateRow = RowBase & { rule: 'ibscbs-aliquotas' | 'ibscbs-aliquotas-provisorias'; from: string; until: string; rates: PublishedRates };
export type PaymentRow = RowBase & { rule: 'tpag' | 'tpag-grupo-cartao'; tPag: string };
/** A rule that holds for the emitters of some UFs only. */
export type UfRow = RowBase & { rule: 'resp-tec-obrigatorio'; ufs: readonly string[] };
export type PlainRow = RowBase & { rule: Exclude<LawRule, RateRow['rule'] | PaymentRow['rule'] | UfRow['rule']> };
export type LawRow = RateRow | PaymentRow | UfRow | PlainRow;

const REFORM_ROWS: readonly LawRow[] = [
  {
    rule: 'ibscbs-grupos',
    what: 'IBS/CBS groups in the NFC-e and NF-e: CRT 3 always, CRT 1/2/4 when the company opts in',
    from: '2026-01-01',
    source: 'LC 214/2025; NT 2025.002-RTC',
    confidence: 'HIGH',
  },
  {
    rule: 'ibscbs-rejeicao-1115',
    what: 'Rejection 1115 (UB12-10): a CRT 3 item without IBSCBS; elsewhere the NFC-e is authorized with alert 120',
    from: '2026-07-01',
    environment: 'homologacao',
    source: 'NT 2025.002-RTC v1.52 (produção: "implementação futura")',
    confidence: 'MEDIUM',
  },
  {
    rule: 'ibscbs-aliquotas',
    what: 'IBS-UF 0.10 %, IBS-Mun 0.00 %, CBS 0.90 % (test year, outside the price)',
    from: '2026-01-01',
    until: '2026-12-31',
    rates: { pIBSUF: '0.10', pIBSMun: '0.00', pCBS: '0.90' },
    source: 'NT 2025.002-RTC (UB18-10, UB37-10, UB56-10)',
    confidence: 'HIGH',
  },
  {
    rule: 'ibscbs-aliquotas',
    what: 'IBS-UF 0.05 %, IBS-Mun 0.05 %; CBS "the rate in force", not published',
    from: '2027-01-01',
    until: '2028-12-31',
    rates: { pIBSUF: '0.05', pIBSMun: '0.05', pCBS: null },
    source: 'LC 214/2025 art. 343; NT 2025.002-RTC (UB18-10); IT 2025.002 v1.60 ("aguardar legislação")',
    confidence: 'MEDIUM',
  },
  {
    // Balcão's decision (docs/fiscal.md, "When nobody sets the rate"): on 1 January 2027 a CRT 3
    // store sells even if the Senate, the service's operator and the company all said nothing.
    rule: 'ibscbs-aliquotas-provisorias',
    what: 'CBS 8.80 % (provisional) while neither the published table, the service operator nor the company gives the CBS',
    from: '2027-01-01',
    until: '2028-12-31',
    rates: { pIBSUF: null, pIBSMun: null, pCBS: '8.80' },
    source: 'Balcão decision: the Ministério da Fazenda estimate of the CBS reference rate (LC 214/2025 art. 349: Senate, else TCU)',
    confidence: 'UNVERIFIED',
  },
  {
    rule: 'ibscbs-no-preco',
    what: 'vProd contains the IBS and CBS: the base is taken out of the price',
    from: '2027-01-01',
    source: 'NT 2026.008',
    confidence: 'MEDIUM',
  },
];

const CNPJ_ROWS: readonly LawRow[] = [
  {
    rule: 'cnpj-alfanumerico',
    what: 'Alphanumeric CNPJ (issuer, consumer, card group, parties) and the keys and Ids that carry it',
    from: '2026-06-15',
    environment: 'homologacao',
    source: 'NT 2026.004 v1.01 (PL_010d)',
    confidence: 'MEDIUM',
  },
  {
    rule: 'cnpj-alfanumerico',
    what: 'Alphanumeric CNPJ (issuer, consumer, card group, parties) and the keys and Ids that carry it',
    from: '2026-07-01',
    environment: 'producao',
    source: 'NT 2026.004 v1.01 (PL_010d)',
    confidence: 'LOW',
  },
];

// NT 2018.005 (v1.30 and later, up to v1.52 of 10/07/2025): rule ZD01-10 is "implementação
// futura" except in AM, MS, PE, PR, SC and TO, where it was in force in homologação when v1.30 was
// published and in produção from 03/06/2019. The list is read from the MOC's rule table as public
// repositories quote it and from one 2026 ERP audit; no later change to it was found. UNVERIFIED
// (docs/fiscal.md, "Technical responsible"): a new UF is a new row, with its date.
const RESP_TEC_UFS = ['AM', 'MS', 'PE', 'PR', 'SC', 'TO'] as const;
const RESP_TEC_ROWS: readonly LawRow[] = [
  {
    rule: 'resp-tec-obrigatorio',
    what: `infRespTec required in the NF-e/NFC-e of emitters in ${RESP_TEC_UFS.join(', ')} (ZD01-10, rejection 972)`,
    ufs: RESP_TEC_UFS,
    environment: 'homologacao',
    source: 'NT 2018.005 v1.30 (in force in homologação at publication); v1.52 (10/07/2025)',
    confidence: 'UNVERIFIED',
  },
  {
    rule: 'resp-tec-obrigatorio',
    what: `infRespTec required in the NF-e/NFC-e of emitters in ${RESP_TEC_UFS.join(', ')} (ZD01-10, rejection 972)`,
    ufs: RESP_TEC_UFS,
    from: '2019-06-03',
    environment: 'producao',
    source: 'NT 2018.005 v1.30; v1.52 (10/07/2025)',
    confidence: 'UNVERIFIED',
  },
];

/** The dated facts of the payment methods (base/common/payment-methods.ts). */
const PAYMENT_ROWS: readonly LawRow[] = PAYMENT_METHODS.flatMap((m): PaymentRow[] => [
  ...(m.from || m.until
    ? [
        {
          rule: 'tpag' as const,
          tPag: m.tPag,
          what: `tPag ${m.tPag} ${m.name}`,
          ...(m.from && { from: m.from }),
          ...(m.until && { until: m.until }),
          source: m.source,
          confidence: 'MEDIUM' as const,
        },
      ]
    : []),
  ...(m.cardFrom
    ? [
        {
          rule: 'tpag-grupo-cartao' as const,
          tPag: m.tPag,
          what: `tPag ${m.tPag} ${m.name} needs the card group (rejection 391)`,
          from: m.cardFrom,
          source: m.cardSource ?? m.source,
          confidence: 'UNVERIFIED' as const,
        },
      ]
    : []),
]);

/** Every dated rule, in the order docs/fiscal.md lists them. */
export const LAW_TABLE: readonly LawRow[] = Object.freeze([...REFORM_ROWS, ...CNPJ_ROWS, ...RESP_TEC_ROWS, ...PAYMENT_ROWS]);
