// The company's tax reform settings (IBS/CBS) in the company form: the Simples Nacional opt-in,
// the classification of products without their own, and the company's rates for periods. The
// core checks them (codes against the official tables, periods that do not overlap) when the
// company is saved, naming the field.

import { useStatus } from '../state/status-store.ts';
import type { CompanyProfile, IbsCbsProfile, IbsCbsRatePeriod } from '../../electron/api/terminal-api.ts';

export const DEFAULT_IBSCBS: IbsCbsProfile = { optIn: false, defaultClassification: { CST: '000', cClassTrib: '000001' }, rates: [] };

const RATES = [
  { key: 'pIBSUF', label: 'IBS da UF (%)' },
  { key: 'pIBSMun', label: 'IBS do município (%)' },
  { key: 'pCBS', label: 'CBS (%)' },
] as const;

/** What the form holds for a period: every field as typed (decimal comma allowed). */
export type RateRow = { from: string; to: string; pIBSUF: string; pIBSMun: string; pCBS: string };

export const rowsOf = (p: IbsCbsProfile): RateRow[] =>
  p.rates.map((r) => ({ from: r.from, to: r.to ?? '', pIBSUF: r.pIBSUF ?? '', pIBSMun: r.pIBSMun ?? '', pCBS: r.pCBS ?? '' }));

/** The periods to save: blanks left out, "8,80" sent as "8.80". */
export function periodsOf(rows: RateRow[]): IbsCbsRatePeriod[] {
  return rows.map((r) => {
    const period: IbsCbsRatePeriod = { from: r.from.trim() };
    if (r.to.trim()) period.to = r.to.trim();
    for (const { key } of RATES) if (r[key].trim()) period[key] = r[key].trim().replace(',', '.');
    return period;
  });
}

export type IbsCbsForm = { optIn: boolean; CST: string; cClassTrib: string; rows: RateRow[] };

export const formOf = (p: IbsCbsProfile | undefined): IbsCbsForm => {
  const v = p ?? DEFAULT_IBSCBS;
  return { optIn: v.optIn, CST: v.defaultClassification.CST, cClassTrib: v.defaultClassification.cClassTrib, rows: rowsOf(v) };
};

export const profileOf = (f: IbsCbsForm): IbsCbsProfile => ({
  optIn: f.optIn,
  defaultClassification: { CST: f.CST.trim(), cClassTrib: f.cClassTrib.trim() },
  rates: periodsOf(f.rows),
});

export function IbsCbsFields(props: { crt: CompanyProfile['crt']; value: IbsCbsForm; onChange: (v: IbsCbsForm) => void }) {
  const { value: v, onChange } = props;
  const setRow = (i: number, patch: Partial<RateRow>) => onChange({ ...v, rows: v.rows.map((r, k) => (k === i ? { ...r, ...patch } : r)) });
  // What the service warns this company about (from 1 December: next year's rates missing).
  const notices = useStatus((s) => s.queue?.serviceNotices) ?? [];
  return (
    <fieldset className="ibscbs">
      <legend>Reforma tributária (IBS/CBS)</legend>
      {notices.map((n) => (
        <p key={n} className="warn-text" role="status">
          {n}
        </p>
      ))}
      <p className="muted small-text">
        O regime normal (CRT 3) informa IBS e CBS em toda NFC-e desde 2026. O Simples Nacional só informa com a opção abaixo, até que as regras dele sejam
        publicadas.
      </p>
      <label className="check">
        <input type="checkbox" checked={v.optIn} disabled={props.crt === 3} onChange={(e) => onChange({ ...v, optIn: e.target.checked })} />
        <span>Simples Nacional informa IBS/CBS na NFC-e</span>
      </label>
      <div className="grid-2">
        <label className="field">
          <span>CST do IBS/CBS padrão</span>
          <input autoComplete="off" inputMode="numeric" value={v.CST} onChange={(e) => onChange({ ...v, CST: e.target.value })} />
        </label>
        <label className="field">
          <span>Classificação tributária (cClassTrib) padrão</span>
          <input autoComplete="off" inputMode="numeric" value={v.cClassTrib} onChange={(e) => onChange({ ...v, cClassTrib: e.target.value })} />
        </label>
      </div>
      <table className="rate-periods">
        <caption>Alíquotas próprias por período (em branco: as publicadas)</caption>
        <thead>
          <tr>
            <th scope="col">Início</th>
            <th scope="col">Fim</th>
            {RATES.map((r) => (
              <th key={r.key} scope="col">
                {r.label}
              </th>
            ))}
            <th scope="col">
              <span className="visually-hidden">Ações</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {v.rows.map((row, i) => (
            <tr key={i}>
              <td>
                <input
                  aria-label={`Início do período ${i + 1}`}
                  placeholder="AAAA-MM-DD"
                  value={row.from}
                  onChange={(e) => setRow(i, { from: e.target.value })}
                />
              </td>
              <td>
                <input aria-label={`Fim do período ${i + 1}`} placeholder="sem fim" value={row.to} onChange={(e) => setRow(i, { to: e.target.value })} />
              </td>
              {RATES.map((r) => (
                <td key={r.key}>
                  <input
                    aria-label={`${r.label} no período ${i + 1}`}
                    inputMode="decimal"
                    value={row[r.key]}
                    onChange={(e) => setRow(i, { [r.key]: e.target.value })}
                  />
                </td>
              ))}
              <td>
                <button type="button" className="small" onClick={() => onChange({ ...v, rows: v.rows.filter((_, k) => k !== i) })}>
                  Remover período {i + 1}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button type="button" className="small" onClick={() => onChange({ ...v, rows: [...v.rows, { from: '', to: '', pIBSUF: '', pIBSMun: '', pCBS: '' }] })}>
        Adicionar período
      </button>
    </fieldset>
  );
}
