// The NF-e de devolução in the accountant's NFC-e export (docs/api.md, "Accountant's export"):
// the returns issued in the period (by ide/dhEmi, Brasília days) that the authority authorized,
// each as its nfeProc in the archive's own folder `devolucoes/`, and one summary line each whose
// values are read from the document's XML as the archive reaches it (one document at a time, so
// a period's returns are never all in memory).

import { toCents } from '../../fiscal/money.ts';
import { nfeReader } from '../../fiscal/nfe-reader.ts';
import { withDeclaration, type ZipSource } from './zip-stream.ts';

/** The folder of the returns inside the archive. */
export const DEVOLUCOES_FOLDER = 'devolucoes';

export const devolucaoFileName = (chave: string): string => `${DEVOLUCOES_FOLDER}/${chave}-nfe.xml`;

/** An authorized return as the export lists it, without its XML. */
export type DevolucaoExportEntry = {
  id: string;
  chave: string;
  serie: number;
  numero: number;
  /** As written in ide/dhEmi. */
  dhEmi: string;
  protocolo: string | null;
  autorizadoEm: string | null;
};

/** Where the returns come from (the NF-e store: nfe/store.ts implements it). */
export interface DevolucaoExportSource {
  /** The company's authorized returns whose dhEmi falls in [from, until), by series and number. */
  exportEntries(companyId: string, from: Date, until: Date): Promise<DevolucaoExportEntry[]>;
  getXml(companyId: string, id: string): Promise<{ nfeProc: string | null } | undefined>;
}

/** What a return's summary line needs, read from its nfeProc. */
export type DevolucaoFacts = DevolucaoExportEntry & { name: string; vNFCents: bigint };

/** vNF of an NF-e XML, in cents. */
export function vNFOf(xml: string): bigint {
  const { at, section, textOf } = nfeReader(xml);
  const vNF = textOf(section(section(at(xml, 'infNFe')?.body, 'total'), 'ICMSTot'), 'vNF');
  if (vNF === undefined) throw new Error('NF-e sem total/ICMSTot/vNF');
  return toCents(vNF, 'vNF');
}

/** The archive's entries of the period's returns; `line` hears of each as it is written. */
export async function devolucaoEntries(
  source: DevolucaoExportSource,
  companyId: string,
  period: { start: Date; end: Date },
  line: (facts: DevolucaoFacts) => Promise<void>,
): Promise<ZipSource[]> {
  const returns = await source.exportEntries(companyId, period.start, period.end);
  return returns.map((r) => {
    const name = devolucaoFileName(r.chave);
    return {
      name,
      content: async () => {
        const xml = (await source.getXml(companyId, r.id))?.nfeProc;
        if (!xml) throw new Error(`NF-e de devolução ${r.chave} sem nfeProc para exportar`);
        await line({ ...r, name, vNFCents: vNFOf(xml) });
        return withDeclaration(xml);
      },
    };
  });
}
