// The payment methods (`detPag/tPag`), defined once for every layer (docs/fiscal.md, "Payments"):
// the NFC-e builder and the sandbox authority (which codes exist on a date, which need the card
// group), the DANFE (the official name), the checkout screen and the terminal (which the counter
// takes, the name people read), the reports and the till's closing.
//
// A code's validity and the day a card rule began covering it are dated facts of the law: they are
// written here, with their source, and listed with every other dated rule in fiscal/law/ (the
// screen reads this file too, and may not import fiscal/). Dates are the first and last day in
// force, inclusive, compared with the date of the document's dhEmi (fiscal/law/in-force.ts).

/**
 * The card group (`detPag/card`, "Cartões, PIX, Boletos e outros Pagamentos Eletrônicos"):
 * - `required`: rule YA04-10, rejection 391 without it, applied by every authority;
 * - `required-uf`: YA04-10 names the method too, but its enforcement is at the UF's discretion
 *   in older texts (UNVERIFIED that every UF applies it): the sandbox applies it as the strictest UF
 *   does and the builder refuses the method without it, so a Balcão document passes in every UF;
 * - `optional`: may carry it (boletos, transfers...);
 * - `none`: carries none (the terminal refuses one for cash or a cheque).
 */
export type CardGroupRule = 'required' | 'required-uf' | 'optional' | 'none';

/**
 * Where the counter stands: `offered` (a button of the payment dialog), `accepted` (the terminal
 * takes it from a caller of its API, the screen does not show it), `no`.
 */
export type CounterUse = 'offered' | 'accepted' | 'no';

export type PaymentMethod = {
  tPag: string;
  /** The official name (Informe Técnico 2024.002), as the DANFE prints it. */
  name: string;
  /** The name people read on the screen, the reports and the till's closing. */
  label: string;
  card: CardGroupRule;
  /** Whether the card group names a card brand (tBand): cards and vouchers, not PIX or transfers. */
  cardBrand?: true;
  /** The day the card rule began covering this method, when later than the method itself. */
  cardFrom?: string;
  /** The source of `cardFrom`. */
  cardSource?: string;
  counter: CounterUse;
  /** First and last day the code is in force (absent: no limit known to us). */
  from?: string;
  until?: string;
  /** Where the code (and its dates) come from. */
  source: string;
};

const LAYOUT_400 = 'leiaute 4.00 (NT 2016.002)';
const NT_2020_006 = 'NT 2020.006';
const IT_2024_002 = 'Informe Técnico 2024.002 v1.00 (produção 01/07/2024)';

/** The two PIX methods the counter takes itself (docs/pix.md): the dynamic charge at the store's PSP and the static BR Code. */
export const PIX_DYNAMIC = '17';
export const PIX_STATIC = '20';

/** Every tPag code, in code order. */
export const PAYMENT_METHODS: readonly PaymentMethod[] = Object.freeze(
  (
    [
      { tPag: '01', name: 'Dinheiro', label: 'Dinheiro', card: 'none', counter: 'offered', source: LAYOUT_400 },
      { tPag: '02', name: 'Cheque', label: 'Cheque', card: 'none', counter: 'accepted', source: LAYOUT_400 },
      { tPag: '03', cardBrand: true, name: 'Cartão de Crédito', label: 'Cartão de Crédito', card: 'required', counter: 'offered', source: LAYOUT_400 },
      { tPag: '04', cardBrand: true, name: 'Cartão de Débito', label: 'Cartão de Débito', card: 'required', counter: 'offered', source: LAYOUT_400 },
      {
        tPag: '05',
        cardBrand: true,
        name: 'Cartão da Loja / Outros Crediários',
        label: 'Crédito Loja',
        card: 'optional',
        counter: 'accepted',
        source: NT_2020_006,
      },
      { tPag: '10', cardBrand: true, name: 'Vale Alimentação', label: 'Vale Alimentação', card: 'optional', counter: 'accepted', source: LAYOUT_400 },
      { tPag: '11', cardBrand: true, name: 'Vale Refeição', label: 'Vale Refeição', card: 'optional', counter: 'accepted', source: LAYOUT_400 },
      { tPag: '12', cardBrand: true, name: 'Vale Presente', label: 'Vale Presente', card: 'optional', counter: 'accepted', source: LAYOUT_400 },
      { tPag: '13', cardBrand: true, name: 'Vale Combustível', label: 'Vale Combustível', card: 'optional', counter: 'accepted', source: LAYOUT_400 },
      { tPag: '14', name: 'Duplicata Mercantil', label: 'Duplicata Mercantil', card: 'optional', counter: 'no', source: LAYOUT_400 },
      { tPag: '15', name: 'Boleto Bancário', label: 'Boleto Bancário', card: 'optional', counter: 'accepted', source: LAYOUT_400 },
      { tPag: '16', name: 'Depósito Bancário', label: 'Depósito Bancário', card: 'optional', counter: 'accepted', source: NT_2020_006 },
      {
        tPag: '17',
        name: 'Pagamento Instantâneo (PIX) – Dinâmico',
        label: 'PIX Dinâmico',
        card: 'required-uf',
        cardFrom: '2025-09-01',
        cardSource: 'NT 2025.001 v1.02, rule YA04-10 (date: the NT’s production date, UNVERIFIED for this rule)',
        counter: 'offered',
        source: `${NT_2020_006}; ${IT_2024_002}`,
      },
      {
        tPag: '18',
        name: 'Transferência bancária, Carteira Digital',
        label: 'Transferência bancária, Carteira Digital',
        card: 'optional',
        counter: 'accepted',
        source: NT_2020_006,
      },
      {
        tPag: '19',
        name: 'Programa de fidelidade, Cashback, Crédito Virtual',
        label: 'Programa de fidelidade, Cashback',
        card: 'optional',
        counter: 'accepted',
        source: NT_2020_006,
      },
      {
        tPag: '20',
        name: 'Pagamento Instantâneo (PIX) – Estático',
        label: 'PIX Estático',
        card: 'optional',
        counter: 'offered',
        from: '2024-07-01',
        source: IT_2024_002,
      },
      { tPag: '21', name: 'Crédito em Loja', label: 'Crédito em Loja', card: 'optional', counter: 'accepted', from: '2024-07-01', source: IT_2024_002 },
      {
        tPag: '22',
        name: 'Pagamento Eletrônico não Informado – falha de hardware do sistema emissor',
        label: 'Pagamento eletrônico não informado',
        card: 'optional',
        counter: 'no',
        from: '2024-07-01',
        source: IT_2024_002,
      },
      {
        tPag: '23',
        name: 'Pagamento Instantâneo (PIX) – Automático',
        label: 'PIX Automático',
        card: 'optional',
        counter: 'accepted',
        from: '2026-05-04',
        source: 'Informe Técnico 2024.002 v1.11',
      },
      {
        tPag: '24',
        name: 'Transferência Eletrônica de Fundos (TEF) – Book Transfer',
        label: 'TEF Book Transfer',
        card: 'optional',
        counter: 'accepted',
        from: '2026-05-04',
        source: 'Informe Técnico 2024.002 v1.11',
      },
      { tPag: '90', name: 'Sem pagamento', label: 'Sem pagamento', card: 'none', counter: 'no', source: LAYOUT_400 },
      {
        tPag: '91',
        name: 'Pagamento Posterior',
        label: 'Pagamento posterior',
        card: 'none',
        counter: 'no',
        from: '2025-11-03',
        source: 'Informe Técnico 2024.002 v1.10',
      },
      { tPag: '99', name: 'Outros', label: 'Outros', card: 'optional', counter: 'no', source: LAYOUT_400 },
    ] satisfies PaymentMethod[]
  ).map((m) => Object.freeze(m)),
);

const BY_CODE: ReadonlyMap<string, PaymentMethod> = new Map(PAYMENT_METHODS.map((m) => [m.tPag, m]));

/** The method of a code, if the code exists at all (whatever its dates). */
export const paymentMethod = (tPag: string): PaymentMethod | undefined => BY_CODE.get(tPag);

/** A method's name for people, even for a code that does not exist. */
export const paymentMethodLabel = (tPag: string): string => BY_CODE.get(tPag)?.label ?? `Forma de pagamento ${tPag}`;

/** The official name (DANFE), even for a code that does not exist. */
export const paymentMethodName = (tPag: string): string => BY_CODE.get(tPag)?.name ?? `Forma de pagamento ${tPag}`;

/** The methods the checkout's payment dialog offers, in code order. */
export const COUNTER_METHODS: readonly PaymentMethod[] = PAYMENT_METHODS.filter((m) => m.counter === 'offered');

/** Whether a payment by this method may carry the card group at all. */
export const carriesCardGroup = (tPag: string): boolean => (BY_CODE.get(tPag)?.card ?? 'optional') !== 'none';
