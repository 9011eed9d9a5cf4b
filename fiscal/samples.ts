// Sample fiscal data: the demo store of `npm start`, and the documents benchmarks and
// cross-part tests issue. Valid in homologation against the official schemas; every figure adds
// up to the cent. Not used to issue anything real.

import { checkDigit } from './access-key.ts';
import type { Emitter } from './company.ts';
import type { MdfeRequest } from './mdfe/types.ts';
import { fromCents, toCents } from './money.ts';
import type { NfceItem, NfceRequest } from './nfce/types.ts';

export const DEMO_CNPJ = '11222333000181';
export const DEMO_CSC = { id: '000001', token: 'CSC-DE-TESTE-123456' };

export function demoEmitter(over: Partial<Emitter> = {}): Emitter {
  return {
    cnpj: DEMO_CNPJ,
    ie: '123456789012',
    xNome: 'MERCADO BALCÃO DEMONSTRAÇÃO LTDA',
    xFant: 'Mercado Balcão',
    address: {
      xLgr: 'Rua das Flores',
      nro: '100',
      xBairro: 'Centro',
      cMun: '3550308',
      xMun: 'São Paulo',
      UF: 'SP',
      CEP: '01001000',
      fone: '1133334444',
    },
    crt: 1,
    environment: 'homologacao',
    csc: DEMO_CSC,
    qrCodeVersion: 2,
    ...over,
  };
}

/** A small catalog of real-looking products (GTIN with valid check digits, real NCMs). */
export const DEMO_PRODUCTS = [
  { cProd: '1001', cEAN: '7891000100103', xProd: 'Café torrado e moído 500g', NCM: '09012100', uCom: 'UN', vUnCom: '18.90' },
  { cProd: '1002', cEAN: '7891910000197', xProd: 'Açúcar refinado 1kg', NCM: '17019900', uCom: 'UN', vUnCom: '4.79' },
  { cProd: '1003', cEAN: '7896005800010', xProd: 'Arroz branco tipo 1 5kg', NCM: '10063021', uCom: 'UN', vUnCom: '27.45' },
  { cProd: '1004', cEAN: '7896102000122', xProd: 'Feijão carioca 1kg', NCM: '07133319', uCom: 'UN', vUnCom: '8.99' },
  { cProd: '1005', cEAN: '7894900011517', xProd: 'Refrigerante cola 2L', NCM: '22021000', uCom: 'UN', vUnCom: '9.49' },
  { cProd: '1006', cEAN: 'SEM GTIN', xProd: 'Pão francês', NCM: '19059020', uCom: 'KG', vUnCom: '14.90' },
  { cProd: '1007', cEAN: '7891000053508', xProd: 'Leite integral 1L', NCM: '04012010', uCom: 'UN', vUnCom: '5.29' },
  { cProd: '1008', cEAN: '7896036090244', xProd: 'Óleo de soja 900ml', NCM: '15079011', uCom: 'UN', vUnCom: '7.89' },
  { cProd: '1009', cEAN: '7891150020436', xProd: 'Sabão em pó 1kg', NCM: '34029090', uCom: 'UN', vUnCom: '12.90' },
  { cProd: '1010', cEAN: '7896004000022', xProd: 'Macarrão espaguete 500g', NCM: '19021900', uCom: 'UN', vUnCom: '4.35' },
] as const;

const SN102 = { ICMS: { ICMSSN102: { orig: '0', CSOSN: '102' } } };

/**
 * An NFC-e of `items` items (cycling through the demo catalog), paid in cash; vNF is the exact
 * sum. In homologation the builder replaces item 1's description with the mandatory text.
 */
export function sampleNfceRequest(options: { nNF: number; serie?: number; items?: number; payment?: 'cash' | 'card' }): NfceRequest {
  const count = options.items ?? 3;
  const det: NfceItem[] = [];
  let total = 0n;
  for (let i = 0; i < count; i++) {
    const p = DEMO_PRODUCTS[i % DEMO_PRODUCTS.length]!;
    const qty = BigInt((i % 3) + 1);
    const vProd = toCents(p.vUnCom, 'vUnCom') * qty;
    total += vProd;
    det.push({
      prod: {
        cProd: p.cProd,
        cEAN: p.cEAN,
        xProd: p.xProd,
        NCM: p.NCM,
        CFOP: '5102',
        uCom: p.uCom,
        qCom: qty.toString(),
        vUnCom: p.vUnCom,
        vProd: fromCents(vProd),
        cEANTrib: p.cEAN,
        uTrib: p.uCom,
        qTrib: qty.toString(),
        vUnTrib: p.vUnCom,
        indTot: '1',
      },
      // A copy per item: a caller changing one item's taxes must not change the others.
      imposto: structuredClone(SN102),
    });
  }
  const vNF = fromCents(total);
  const pag = options.payment === 'card' ? [{ tPag: '03', vPag: vNF, card: { tpIntegra: '2', tBand: '01' } }] : [{ tPag: '01', vPag: vNF }];
  return { ide: { serie: options.serie ?? 1, nNF: options.nNF }, det, total: { vProd: vNF, vNF }, pag };
}

// A real NF-e key (SP, model 55, valid DV: docs/fiscal.md, "Access key") and a synthetic CT-e key (model 57).
const NFE_KEY = '35180834128745000152550010000474281920007498';
const cteBody = '3526111122233300018157001000000123112345679';
const CTE_KEY = cteBody + checkDigit(cteBody);

/** A road MDF-e with the emitter's own vehicle, SP → BA through MG, every authority rule met. */
export function sampleMdfeRequest(options: { nMDF: number; placa?: string; serie?: number }): MdfeRequest {
  return {
    ide: {
      nMDF: options.nMDF,
      serie: options.serie ?? 1,
      modal: '1',
      tpEmit: '1',
      UFIni: 'SP',
      UFFim: 'BA',
      infMunCarrega: [{ cMunCarrega: '3550308', xMunCarrega: 'São Paulo' }],
      infPercurso: [{ UFPer: 'MG' }],
    },
    rodo: {
      RNTRC: '12345678',
      veicTracao: {
        placa: options.placa ?? 'ABC1D23',
        UF: 'SP',
        tara: '9000',
        capKG: 25000,
        condutor: { xNome: 'João da Silva', CPF: '52998224725' },
        tpRod: '03',
        tpCar: '02',
      },
      infContratante: [{ xNome: 'Comércio Contratante Ltda', CNPJ: '11444777000161' }],
      infPag: [
        {
          xNome: 'Comércio Contratante Ltda',
          CNPJ: '11444777000161',
          Comp: [{ tpComp: '04', vComp: 3500.5 }],
          vContrato: 3500.5,
          indPag: '0',
          infBanc: { PIX: 'financeiro@contratante.com.br' },
        },
      ],
    },
    infDoc: {
      infMunDescarga: [
        { cMunDescarga: '2927408', xMunDescarga: 'Salvador', infCTe: [{ chCTe: CTE_KEY }] },
        { cMunDescarga: '2910800', xMunDescarga: 'Feira de Santana', infNFe: [{ chNFe: NFE_KEY }] },
      ],
    },
    seg: { respSeg: '1', xSeg: 'Seguradora Exemplo S.A.', seg_CNPJ: '11444777000161', nApol: 'APOL-2026-001', nAver: 'AVB-000123' },
    prodPred: {
      tpCarga: '05',
      xProd: 'Eletrodomésticos',
      NCM: '84181000',
      infLotacao: { cepCarrega: '01310100', cepDescarrega: '40020000' },
    },
    tot: { vCarga: 152340.75, cUnid: '01', qCarga: 12500.125 },
  };
}
