// TypeBox schemas of the NFC-e endpoints: written once, they validate requests (strictly: an
// unknown field is a 400, never silently dropped), type the handlers, serialize the answers and
// describe all of it in the OpenAPI document.
//
// The request schema checks shape and types only (docs/api.md, "Errors": wrong types and missing fields are
// 400). Values (decimal strings, codes, sums, NCM, GTIN...) are checked by the fiscal builder,
// which names every broken field at once: 422 `validacao`.

import { Type, type Static } from '@sinclair/typebox';
import { AccessKey, MAX_KEY_LENGTH, strict } from '../../base/common/api/schema.ts';
import { sampleNfceRequest } from '../../fiscal/samples.ts';

export { AuthorityStatus, CancelBody, NfceAccepted as Accepted, NfceReplay, NfceView, STATUSES, VoidBody, VoidView } from '../../base/common/api/nfce.ts';
import { NfceView, STATUSES } from '../../base/common/api/nfce.ts';
import { IdempotencyHeaders, ReferenciaExterna } from '../idempotency.ts';
import { MAX_WAIT_SECONDS } from '../http/prefer.ts';
import { dayParams, PageEnvelope, pagingParams } from '../http/lists.ts';
import { pdfAnswer, xmlAnswer } from '../http/media.ts';

const str = (description: string) => Type.String({ description });
// The NFC-e's values are the builder's to check (422 naming the field), so no pattern here.
const CNPJ_FORM = '14 caracteres sem pontuação: dígitos ou letras maiúsculas (CNPJ alfanumérico), os dois últimos numéricos';
const opt = (description: string) => Type.Optional(Type.String({ description }));

const Card = Type.Object(
  {
    tpIntegra: Type.Optional(Type.String({ default: '2', description: '1: TEF/POS integrado (exige CNPJ e cAut); 2: maquininha não integrada (padrão)' })),
    CNPJ: opt(`CNPJ da credenciadora / instituição de pagamento (obrigatório com tpIntegra 1); ${CNPJ_FORM}`),
    tBand: opt('Bandeira do cartão (01 Visa, 02 Mastercard, ...)'),
    cAut: opt('Número de autorização da operação (obrigatório com tpIntegra 1)'),
    CNPJReceb: opt(`CNPJ do beneficiário do pagamento; ${CNPJ_FORM}`),
    idTermPag: opt('Identificador do terminal de pagamento'),
  },
  { ...strict, description: 'Grupo do cartão: obrigatório com tPag 03, 04 ou 17 (sem ele, rejeição 391; o PIX 17 sem ele é recusado com 422)' },
);

const TaxGroup = Type.Record(Type.String(), Type.Record(Type.String(), Type.String()), {
  description: 'Um grupo de variante, ex.: { "ICMS40": { "orig": "0", "CST": "40" } }',
});

const Product = Type.Object(
  {
    cProd: str('Código do produto'),
    cEAN: str('GTIN ou "SEM GTIN"'),
    xProd: str('Descrição'),
    NCM: str('NCM, 8 dígitos'),
    CFOP: str('CFOP, 4 dígitos'),
    uCom: str('Unidade comercial'),
    qCom: str('Quantidade comercial (decimal)'),
    vUnCom: str('Valor unitário comercial (decimal)'),
    vProd: str('Valor do item: qCom × vUnCom (decimal, 2 casas)'),
    cEANTrib: str('GTIN da unidade tributável ou "SEM GTIN"'),
    uTrib: str('Unidade tributável'),
    qTrib: str('Quantidade tributável (decimal)'),
    vUnTrib: str('Valor unitário tributável (decimal)'),
    indTot: str('"1": compõe o total'),
    vDesc: opt('Desconto do item (decimal)'),
  },
  strict,
);

const Reduction = Type.Optional(
  Type.Object(
    { pRedAliq: opt('Percentual de redução da alíquota'), pAliqEfet: opt('Alíquota efetiva') },
    { ...strict, description: 'Redução de alíquota (gRed)' },
  ),
);

const IbsCbs = Type.Object(
  {
    CST: str('CST do IBS/CBS, 3 dígitos (ex.: 000 tributação integral, 200 alíquota reduzida, 410 imunidade)'),
    cClassTrib: str('Classificação tributária do IBS/CBS, 6 dígitos (ex.: 000001), do mesmo CST'),
    gIBSCBS: Type.Optional(
      Type.Object(
        {
          vBC: opt('Base de cálculo: valor do item menos o desconto (a partir de 2027, sem o IBS e a CBS contidos no preço)'),
          gIBSUF: Type.Optional(Type.Object({ pIBSUF: opt('Alíquota do IBS da UF'), gRed: Reduction, vIBSUF: opt('Valor do IBS da UF') }, strict)),
          gIBSMun: Type.Optional(
            Type.Object({ pIBSMun: opt('Alíquota do IBS do município'), gRed: Reduction, vIBSMun: opt('Valor do IBS do município') }, strict),
          ),
          vIBS: opt('vIBSUF + vIBSMun'),
          gCBS: Type.Optional(Type.Object({ pCBS: opt('Alíquota da CBS'), gRed: Reduction, vCBS: opt('Valor da CBS') }, strict)),
        },
        {
          ...strict,
          description:
            'Valores do IBS/CBS: opcionais; o serviço calcula os que faltam e confere os informados (alíquotas vigentes na data de emissão, valores com tolerância de 0,01)',
        },
      ),
    ),
  },
  {
    ...strict,
    description:
      'Reforma tributária: classificação do IBS/CBS do item. Ausente: a classificação padrão da empresa. Só vai para a NFC-e quando a empresa informa IBS/CBS (CRT 3, ou Simples com a opção ativada)',
  },
);

const Item = Type.Object(
  {
    prod: Product,
    imposto: Type.Object(
      {
        ICMS: TaxGroup,
        PIS: Type.Optional(TaxGroup),
        COFINS: Type.Optional(TaxGroup),
        vTotTrib: opt('Tributos aproximados do item (Lei 12.741/2012)'),
        IBSCBS: Type.Optional(IbsCbs),
      },
      strict,
    ),
  },
  strict,
);

const Payment = Type.Object(
  {
    tPag: str(
      'Forma de pagamento: 01 dinheiro, 03 crédito, 04 débito, 17 PIX dinâmico, 23 PIX Automático, 24 TEF Book Transfer, ... (docs/fiscal.md, "Payments")',
    ),
    vPag: str('Valor pago (decimal)'),
    indPag: opt('0 à vista, 1 a prazo'),
    xPag: opt('Descrição da forma (tPag 99)'),
    dPag: opt('Data do pagamento, AAAA-MM-DD'),
    card: Type.Optional(Card),
  },
  strict,
);

export const NfceBody = Type.Object(
  {
    ide: Type.Object(
      {
        serie: Type.Integer({ minimum: 0, maximum: 999, description: 'Série' }),
        nNF: Type.Integer({ minimum: 1, maximum: 999_999_999, description: 'Número da NFC-e, escolhido pelo chamador' }),
        natOp: opt('Natureza da operação (padrão VENDA)'),
        indPres: opt('Indicador de presença (padrão 1, presencial)'),
      },
      strict,
    ),
    det: Type.Array(Item, { minItems: 1, maxItems: 990, description: 'Itens' }),
    total: Type.Object({ vProd: str('Soma dos itens'), vNF: str('Valor da nota'), vDesc: opt('Desconto total') }, strict),
    pag: Type.Array(Payment, { minItems: 1, maxItems: 100, description: 'Pagamentos' }),
    vTroco: opt('Troco (decimal)'),
    card: Type.Optional(Card),
    dest: Type.Optional(
      Type.Object(
        { cpf: opt('CPF do consumidor'), cnpj: opt(`CNPJ do consumidor; ${CNPJ_FORM}`), idEstrangeiro: opt('Documento de estrangeiro'), xNome: opt('Nome') },
        {
          ...strict,
          description: 'Consumidor: opcional até R$ 10.000,00; acima disso (ou do limite da UF), o CPF ou o CNPJ é obrigatório (NT 2026.002, rejeição 750)',
        },
      ),
    ),
    vTotTrib: opt('Total aproximado de tributos; calculado quando ausente'),
    infCpl: opt('Informações complementares'),
    infAdFisco: opt('Informações de interesse do fisco'),
    referencia_externa: Type.Optional(ReferenciaExterna),
  },
  { ...strict, description: 'NFC-e: valores monetários e quantidades como texto decimal' },
);
export type NfceBody = Static<typeof NfceBody>;

export const ContingencyBody = Type.Object(
  {
    xml: Type.String({ minLength: 1, description: '<NFe> assinada, emitida no terminal em contingência offline (tpEmis 9)' }),
    referencia_externa: Type.Optional(ReferenciaExterna),
  },
  { ...strict, description: 'NFC-e emitida em contingência offline: transmitida sem alteração (mesma chave, mesmo digest)' },
);
export type ContingencyBody = Static<typeof ContingencyBody>;

/**
 * Either body, told apart by the presence of `xml`. if/then/else rather than oneOf, so that a
 * broken body is reported against the form it meant to be, field by field.
 */
export const IssueBody = Type.Unsafe<NfceBody | ContingencyBody>({
  if: { type: 'object', required: ['xml'] },
  then: ContingencyBody,
  else: NfceBody,
  description: 'NFC-e em JSON ou { "xml": "<NFe ...assinada...>" } emitida em contingência',
  // The sample receipt every test and bench issues: one item, paid in cash.
  examples: [sampleNfceRequest({ nNF: 1, serie: 1, items: 1 })],
});
export type IssueBody = Static<typeof IssueBody>;

export const IdParams = Type.Object({ id: Type.String({ description: 'id da NFC-e' }) }, strict);

/** The issuance's headers: the idempotency key, and the wait for the verdict (RFC 7240). */
export const IssueHeaders = Type.Object({
  ...IdempotencyHeaders.properties,
  prefer: Type.Optional(
    Type.String({
      description: `wait=N: espera até N segundos (no máximo ${MAX_WAIT_SECONDS}) pelo veredito da autoridade antes de responder (RFC 7240)`,
    }),
  ),
});

export const DanfeQuery = Type.Object(
  {
    formato: Type.Optional(
      Type.Union([Type.Literal('pdf'), Type.Literal('escpos')], {
        description: 'pdf (padrão) ou escpos: bytes ESC/POS para impressora térmica de 80 mm (48 colunas)',
      }),
    ),
  },
  strict,
);

export const XmlResponse = xmlAnswer('nfeProc (NFe + protNFe) quando autorizada ou cancelada; a NFe assinada nos demais estados');

export const DanfeResponse = pdfAnswer('DANFE NFC-e de 80 mm com QR Code', { 'application/octet-stream': 'ESC/POS, 48 colunas' });

// --- lists and lookups ------------------------------------------------------------------------

export const ListQuery = Type.Object(
  {
    ...pagingParams,
    status: Type.Optional(
      Type.Union(
        STATUSES.map((s) => Type.Literal(s)),
        { description: 'Situação: processando, autorizado, rejeitado, cancelado' },
      ),
    ),
    serie: Type.Optional(Type.Integer({ minimum: 0, maximum: 999, description: 'Série' })),
    ...dayParams('emissão (dhEmi)'),
    chave: Type.Optional(AccessKey('Chave de acesso')),
    referencia_externa: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_KEY_LENGTH, description: 'Chave de idempotência da emissão (todas as tentativas com ela)' }),
    ),
  },
  strict,
);

export const NfceList = PageEnvelope(NfceView);

export const KeyParams = Type.Object({ chave: AccessKey('Chave de acesso da NFC-e') }, strict);

export const InutilizacaoListQuery = Type.Object(
  { ...pagingParams, serie: Type.Optional(Type.Integer({ minimum: 0, maximum: 999, description: 'Série' })), ...dayParams('registro') },
  strict,
);

export const InutilizacaoView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  serie: Type.Integer(),
  numero_inicial: Type.Integer(),
  numero_final: Type.Integer(),
  justificativa: Type.String(),
  protocolo: Type.String(),
  codigo_status: Type.String({ description: '102: inutilização homologada' }),
  motivo: Type.String(),
  registrado_em: Type.String({ description: 'Registrada pelo serviço em, horário de Brasília' }),
});

export const InutilizacaoList = PageEnvelope(InutilizacaoView);

export const InutilizacaoXmlResponse = xmlAnswer('ProcInutNFe: o pedido assinado e a resposta da autoridade (procInutNFe_v4.00.xsd)');
