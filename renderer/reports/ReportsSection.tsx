// The manager's sales report (Gerente → Relatórios): a period of Brasília days, the totals, the
// payment methods, the sales by hour as a chart, the products, the cancellations (the manager's
// and those by substitution) and the contingency receipts, and the same figures as a CSV
// download. The core reads them from each receipt's fiscal XML (electron/core/reports.ts).

import { useId, useState } from 'react';
import type { ManagerAuthorization, ReportCancellation, SalesReport } from '../../electron/api/terminal-api.ts';
import { downloadText } from '../api/download.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { useTerminalCall } from '../components/use-terminal-call.ts';
import { formatCents, formatQuantity } from '../money/money.ts';
import { terminal } from '../state/terminal.ts';
import { brasiliaToday, dayAsTyped, dayFromTyped } from './brasilia-day.ts';
import { HourChart } from './HourChart.tsx';

const STATES: Record<string, string> = {
  pending: 'aguardando o serviço',
  processing: 'aguardando a SEFAZ',
  rejected: 'rejeitada',
  needs_attention: 'com pendência',
};

/** The period as typed (dd/mm/aaaa), shown in pt-BR whatever the browser's language. */
export type TypedPeriod = { de: string; ate: string };

/** A period starting at `de` and ending at `ate` (AAAA-MM-DD), as the fields show it. */
export const typedPeriod = (de: string, ate: string): TypedPeriod => ({ de: dayAsTyped(de), ate: dayAsTyped(ate) });

/** The period the core takes (AAAA-MM-DD), or the message naming the field that is no date. */
export function periodOf(typed: TypedPeriod): { de: string; ate: string } | { error: string } {
  const de = dayFromTyped(typed.de);
  if (!de) return { error: 'De: data inválida (use dd/mm/aaaa)' };
  const ate = dayFromTyped(typed.ate);
  if (!ate) return { error: 'Até: data inválida (use dd/mm/aaaa)' };
  return { de, ate };
}

export function PeriodFields(props: { value: TypedPeriod; onChange: (p: TypedPeriod) => void }) {
  const { value, onChange } = props;
  const hintId = useId();
  const field = (label: string, key: keyof TypedPeriod) => (
    <label className="field">
      <span>{label}</span>
      <input
        inputMode="numeric"
        autoComplete="off"
        placeholder="dd/mm/aaaa"
        maxLength={10}
        aria-describedby={hintId}
        aria-invalid={dayFromTyped(value[key]) === null}
        value={value[key]}
        onChange={(e) => onChange({ ...value, [key]: e.target.value })}
      />
    </label>
  );
  return (
    <div className="row">
      {field('De', 'de')}
      {field('Até', 'ate')}
      <small id={hintId} className="muted small-text">
        Datas no formato dd/mm/aaaa.
      </small>
    </div>
  );
}

type ReceiptLine = { nNF: number; serie: number; totalCents: number };

/** How it was cancelled: by the manager (110111), or by substitution (110112) by the contingency receipt that covers the sale. */
const cancellationNote = (c: ReportCancellation): string =>
  c.kind === 'substituicao'
    ? `por substituição (evento 110112), pela NFC-e nº ${c.substitute!.nNF} (série ${c.substitute!.serie})`
    : c.substitute
      ? `cancelada (a venda está na NFC-e nº ${c.substitute.nNF}, série ${c.substitute.serie})`
      : 'cancelamento (evento 110111)';

/** A list of receipts by number and value, with a note per line when given; nothing when empty. */
function ReceiptsTable<Row extends ReceiptLine>(props: { caption: string; rows: Row[]; note?: (row: Row) => string }) {
  if (props.rows.length === 0) return null;
  return (
    <table>
      <caption>{props.caption}</caption>
      <tbody>
        {props.rows.map((r) => (
          <tr key={`${r.serie}-${r.nNF}`}>
            <th scope="row">
              NFC-e nº {r.nNF} (série {r.serie})
            </th>
            {props.note && <td>{props.note(r)}</td>}
            <td className="num">{formatCents(r.totalCents)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Report({ report }: { report: SalesReport }) {
  return (
    <div className="report-view" role="region" aria-label="Relatório de vendas">
      <dl className="summary wrap">
        <div>
          <dt>Vendas</dt>
          <dd>{report.totals.count}</dd>
        </div>
        <div>
          <dt>Total</dt>
          <dd className="strong">{formatCents(report.totals.totalCents)}</dd>
        </div>
        <div>
          <dt>Troco dado</dt>
          <dd>{formatCents(report.totals.changeCents)}</dd>
        </div>
        <div>
          <dt>Canceladas</dt>
          <dd>{report.cancelled.length}</dd>
        </div>
        <div>
          <dt>Em contingência</dt>
          <dd>{report.contingency.length}</dd>
        </div>
      </dl>

      <table>
        <caption>Por forma de pagamento</caption>
        <thead>
          <tr>
            <th scope="col">Forma</th>
            <th scope="col" className="num">
              Pagamentos
            </th>
            <th scope="col" className="num">
              Valor
            </th>
          </tr>
        </thead>
        <tbody>
          {report.byPayment.map((p) => (
            <tr key={p.tPag}>
              <th scope="row">{p.description}</th>
              <td className="num">{p.count}</td>
              <td className="num">{formatCents(p.amountCents)}</td>
            </tr>
          ))}
        </tbody>
      </table>

      <h4>Vendas por hora</h4>
      <HourChart byHour={report.byHour} />

      <table>
        <caption>Por produto</caption>
        <thead>
          <tr>
            <th scope="col">Código</th>
            <th scope="col">Produto</th>
            <th scope="col" className="num">
              Quantidade
            </th>
            <th scope="col" className="num">
              Valor
            </th>
          </tr>
        </thead>
        <tbody>
          {report.byProduct.map((p) => (
            <tr key={p.code}>
              <td>{p.code}</td>
              <th scope="row">{p.description}</th>
              <td className="num">
                {formatQuantity(p.quantity)} {p.unit}
              </td>
              <td className="num">{formatCents(p.totalCents)}</td>
            </tr>
          ))}
        </tbody>
      </table>

      <ReceiptsTable caption="Canceladas (fora do total)" rows={report.cancelled} note={cancellationNote} />
      <ReceiptsTable caption="Emitidas em contingência" rows={report.contingency} note={(c) => (c.authorized ? 'autorizada' : 'aguardando autorização')} />
      <ReceiptsTable caption="Vendas ainda sem NFC-e autorizada (fora do total)" rows={report.unauthorized} note={(u) => STATES[u.state] ?? u.state} />
    </div>
  );
}

export function ReportsSection({ auth }: { auth: ManagerAuthorization }) {
  const today = brasiliaToday();
  const [typed, setTyped] = useState(() => typedPeriod(today, today));
  const [report, setReport] = useState<SalesReport | null>(null);
  const { error, setError, busy, run: call } = useTerminalCall<string>();

  const run = (what: 'ver' | 'csv') => {
    const period = periodOf(typed);
    if ('error' in period) return setError(period.error);
    return call(async () => {
      if (what === 'ver') setReport(await terminal().salesReport({ ...auth, ...period }));
      else {
        const { fileName, csv } = await terminal().salesReportCsv({ ...auth, ...period });
        downloadText(fileName, csv, 'text/csv;charset=utf-8');
      }
    });
  };

  return (
    <form
      className="settings-section"
      onSubmit={(e) => {
        e.preventDefault();
        void run('ver');
      }}
    >
      <h3>Relatório de vendas</h3>
      <p className="muted">Dias no horário de Brasília. Os valores vêm do XML de cada NFC-e: os mesmos da exportação para o contador.</p>
      <PeriodFields value={typed} onChange={setTyped} />
      <ErrorAlert error={error} />
      <div className="dialog-actions">
        <button type="button" disabled={busy} onClick={() => void run('csv')}>
          Baixar CSV
        </button>
        <button type="submit" className="primary" disabled={busy}>
          Gerar relatório
        </button>
      </div>
      {report && <Report report={report} />}
    </form>
  );
}
