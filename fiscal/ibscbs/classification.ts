// The IBS/CBS classification of an item: its CST (situação tributária) and cClassTrib
// (classificação tributária), as data.
//
// - The CST table is complete (the 18 codes of NT 2025.002), with the indicator of whether the
//   item carries the tax group gIBSCBS (rejections 1021 / 1022) and whether the rate is reduced
//   (gRed). The indicators were transcribed from a secondary copy of the official table; see
//   docs/fiscal.md, "Tax reform (IBS/CBS)".
// - The cClassTrib table is NOT complete: the official one (Portal da NF-e / SVRS, "Tabela de
//   Classificação Tributária") has about 170 codes, most of them for other documents (NFS-e,
//   CT-e, BP-e...). Here are the codes a shop's NFC-e uses, with the reduction the law gives them
//   (pRedIBS / pRedCBS, percent of the rate). A code that is not here is refused by the builder
//   as "not in Balcão's table", never written unchecked, and the sandbox authority treats it as
//   nonexistent (1023). Adding one is a row here.
// - Which CSTs the NFC-e builder writes: 000 (full rate), 200 (reduced rate) and 410 (immunity /
//   no levy, no tax group). The others need groups a retail NFC-e does not have (deferral,
//   monophasic fuel, credit transfer...) and are refused naming the field.

import { IssueCollector } from '../errors.ts';
import { isAbsent } from '../layout-fields.ts';
import { parseRate, type Rate } from './rates.ts';

export type CstInfo = {
  description: string;
  /** ind_gIBSCBS: the item carries gIBSCBS (1022 without it, 1021 with it when 0). */
  gIBSCBS: boolean;
  /** The rate is reduced: gRed in gIBSUF, gIBSMun and gCBS. */
  gRed: boolean;
};

export const IBSCBS_CST: Readonly<Record<string, CstInfo>> = Object.freeze({
  '000': { description: 'Tributação integral', gIBSCBS: true, gRed: false },
  '010': { description: 'Tributação com alíquotas uniformes', gIBSCBS: false, gRed: false },
  '011': { description: 'Tributação com alíquotas uniformes reduzidas', gIBSCBS: false, gRed: false },
  '200': { description: 'Alíquota reduzida', gIBSCBS: true, gRed: true },
  '220': { description: 'Alíquota fixa', gIBSCBS: true, gRed: false },
  '221': { description: 'Alíquota fixa proporcional', gIBSCBS: false, gRed: false },
  '222': { description: 'Redução de base de cálculo', gIBSCBS: true, gRed: false },
  '400': { description: 'Isenção', gIBSCBS: false, gRed: false },
  '410': { description: 'Imunidade e não incidência', gIBSCBS: false, gRed: false },
  '510': { description: 'Diferimento', gIBSCBS: true, gRed: false },
  '515': { description: 'Diferimento com redução de alíquota', gIBSCBS: true, gRed: true },
  '550': { description: 'Suspensão', gIBSCBS: true, gRed: false },
  '620': { description: 'Tributação monofásica', gIBSCBS: false, gRed: false },
  '800': { description: 'Transferência de crédito', gIBSCBS: false, gRed: false },
  '810': { description: 'Ajuste de IBS na ZFM', gIBSCBS: false, gRed: false },
  '811': { description: 'Ajustes', gIBSCBS: false, gRed: false },
  '820': { description: 'Tributação em declaração de regime específico', gIBSCBS: false, gRed: false },
  '830': { description: 'Exclusão da base de cálculo', gIBSCBS: true, gRed: false },
});

/** The CSTs the NFC-e builder writes (see the header). */
export const NFCE_CST: ReadonlySet<string> = new Set(['000', '200', '410']);

export type ClassTribInfo = {
  CST: string;
  description: string;
  /** Reduction of the IBS and of the CBS rates, percent ("60.00": 60 % less). */
  pRedIBS: string;
  pRedCBS: string;
};

export const CCLASSTRIB: Readonly<Record<string, ClassTribInfo>> = Object.freeze({
  '000001': { CST: '000', description: 'Situações tributadas integralmente pelo IBS e pela CBS', pRedIBS: '0.00', pRedCBS: '0.00' },
  '200003': { CST: '200', description: 'Produtos da Cesta Básica Nacional de Alimentos (Anexo I da LC 214/2025)', pRedIBS: '100.00', pRedCBS: '100.00' },
  '200009': { CST: '200', description: 'Medicamentos do Anexo XIV da LC 214/2025', pRedIBS: '100.00', pRedCBS: '100.00' },
  '200013': { CST: '200', description: 'Absorventes, tampões higiênicos e coletores menstruais', pRedIBS: '100.00', pRedCBS: '100.00' },
  '200014': { CST: '200', description: 'Produtos hortícolas, frutas e ovos (Anexo XV da LC 214/2025)', pRedIBS: '100.00', pRedCBS: '100.00' },
  '200030': { CST: '200', description: 'Dispositivos médicos do Anexo IV da LC 214/2025', pRedIBS: '60.00', pRedCBS: '60.00' },
  '200032': { CST: '200', description: 'Medicamentos registrados na Anvisa ou de farmácias de manipulação', pRedIBS: '60.00', pRedCBS: '60.00' },
  '200034': { CST: '200', description: 'Alimentos do Anexo VII da LC 214/2025', pRedIBS: '60.00', pRedCBS: '60.00' },
  '200035': { CST: '200', description: 'Produtos de higiene pessoal e limpeza do Anexo VIII da LC 214/2025', pRedIBS: '60.00', pRedCBS: '60.00' },
  '200036': {
    CST: '200',
    description: 'Produtos agropecuários, aquícolas, pesqueiros, florestais e extrativistas in natura',
    pRedIBS: '60.00',
    pRedCBS: '60.00',
  },
  '200047': { CST: '200', description: 'Bares e restaurantes', pRedIBS: '40.00', pRedCBS: '40.00' },
  '410001': { CST: '410', description: 'Bonificações que constem do documento fiscal', pRedIBS: '0.00', pRedCBS: '0.00' },
  '410008': { CST: '410', description: 'Livros, jornais, periódicos e o papel destinado à sua impressão', pRedIBS: '0.00', pRedCBS: '0.00' },
});

/** The classification of an item, fully taxed: the company default unless it states another. */
export const DEFAULT_CLASSIFICATION: Readonly<Classification> = Object.freeze({ CST: '000', cClassTrib: '000001' });

export type Classification = { CST: string; cClassTrib: string };

export type CheckedClassification = Classification & { cst: CstInfo; classTrib: ClassTribInfo; pRedIBS: Rate; pRedCBS: Rate };

/**
 * Checks a CST and cClassTrib pair for an NFC-e item: both in the tables, the cClassTrib of that
 * CST, and a CST the NFC-e builder writes. Issues are reported on `path.CST` / `path.cClassTrib`.
 */
export function checkClassification(value: { CST?: unknown; cClassTrib?: unknown }, path: string, issues: IssueCollector): CheckedClassification | undefined {
  const before = issues.issues.length;
  const cstCode = value.CST;
  const classCode = value.cClassTrib;
  let cst: CstInfo | undefined;
  if (isAbsent(cstCode)) issues.add(`${path}.CST`, 'obrigatório');
  else if (typeof cstCode !== 'string' || !/^[0-9]{3}$/.test(cstCode)) issues.add(`${path}.CST`, 'CST do IBS/CBS: 3 dígitos (ex.: 000)');
  else if (!(cst = IBSCBS_CST[cstCode])) issues.add(`${path}.CST`, `CST ${cstCode} do IBS/CBS inexistente (rejeição 1020)`);
  else if (!NFCE_CST.has(cstCode)) {
    issues.add(`${path}.CST`, `CST ${cstCode} (${cst.description}) não é emitido pelo Balcão na NFC-e; aceitos: ${[...NFCE_CST].join(', ')}`);
  }
  let classTrib: ClassTribInfo | undefined;
  if (isAbsent(classCode)) issues.add(`${path}.cClassTrib`, 'obrigatório');
  else if (typeof classCode !== 'string' || !/^[0-9]{6}$/.test(classCode)) issues.add(`${path}.cClassTrib`, 'cClassTrib: 6 dígitos (ex.: 000001)');
  else if (!(classTrib = CCLASSTRIB[classCode])) {
    issues.add(`${path}.cClassTrib`, `cClassTrib ${classCode} não está na tabela do Balcão para a NFC-e; aceitos: ${Object.keys(CCLASSTRIB).join(', ')}`);
  } else if (cst && NFCE_CST.has(cstCode as string) && classTrib.CST !== cstCode) {
    issues.add(`${path}.cClassTrib`, `cClassTrib ${classCode} é do CST ${classTrib.CST}, não do CST ${cstCode} (rejeição 1024)`);
  }
  if (issues.issues.length !== before || !cst || !classTrib) return undefined;
  return {
    CST: cstCode as string,
    cClassTrib: classCode as string,
    cst,
    classTrib,
    ...reductionsOf(classCode as string, classTrib),
  };
}

// The reductions of a code, parsed once: every item of every document asks again.
const reductions = new Map<string, { pRedIBS: Rate; pRedCBS: Rate }>();

function reductionsOf(code: string, info: ClassTribInfo): { pRedIBS: Rate; pRedCBS: Rate } {
  let r = reductions.get(code);
  if (!r) {
    r = { pRedIBS: parseRate(info.pRedIBS, 'pRedIBS'), pRedCBS: parseRate(info.pRedCBS, 'pRedCBS') };
    reductions.set(code, r);
  }
  return r;
}

/** Like checkClassification, throwing a FieldError with every issue (for catalog and settings). */
export function assertClassification(value: { CST?: unknown; cClassTrib?: unknown }, path: string): CheckedClassification {
  const issues = new IssueCollector();
  const checked = checkClassification(value, path, issues);
  issues.throwIfAny();
  return checked!;
}
