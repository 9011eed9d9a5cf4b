// The closing of a session, as the cashier sees it once the count is in: for each payment
// method what the sales say (expected), what was counted and the difference; how the cash
// expected adds up; whether the report came out of the printer; the report's text and its PDF.

import { DynamicPixClosing } from './DynamicPixClosing.tsx';
import { useState } from 'react';
import type { CashSessionView } from '../../electron/api/terminal-api.ts';
import { downloadBase64 } from '../api/download.ts';
import { asFailure } from '../api/terminal-failure.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { formatCents } from '../money/money.ts';
import { printAgain } from '../state/cash-store.ts';
import { terminal } from '../state/terminal.ts';

const signed = (cents: number): string => (cents > 0 ? `+${formatCents(cents)}` : formatCents(cents));

export function ClosingView(props: { session: CashSessionView; onDone: () => void }) {
  const { session, onDone } = props;
  const closing = session.closing!;
  const [error, setError] = useState<string | null>(null);

  const pdf = async () => {
    try {
      const { fileName, pdfBase64 } = await terminal().cashReportPdf(session.id);
      downloadBase64(fileName, pdfBase64, 'application/pdf');
    } catch (err) {
      setError(asFailure(err).message);
    }
  };

  return (
    <div className="closing">
      <h3>Caixa nº {session.number} fechado</h3>
      <table className="closing-table">
        <caption>Fechamento por forma de pagamento</caption>
        <thead>
          <tr>
            <th scope="col">Forma de pagamento</th>
            <th scope="col" className="num">
              Esperado
            </th>
            <th scope="col" className="num">
              Contado
            </th>
            <th scope="col" className="num">
              Diferença
            </th>
          </tr>
        </thead>
        <tbody>
          {closing.methods.map((m) => (
            <tr key={m.tPag}>
              <th scope="row">{m.description}</th>
              <td className="num">{formatCents(m.expectedCents)}</td>
              <td className="num">{formatCents(m.countedCents)}</td>
              <td className={m.differenceCents === 0 ? 'num' : 'num due'}>{signed(m.differenceCents)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">Diferença total</th>
            <td />
            <td />
            <td className={closing.differenceCents === 0 ? 'num strong' : 'num strong due'}>{signed(closing.differenceCents)}</td>
          </tr>
        </tfoot>
      </table>
      <dl className="summary wrap" aria-label="Dinheiro esperado">
        <div>
          <dt>Troco inicial</dt>
          <dd>{formatCents(closing.cash.floatCents)}</dd>
        </div>
        <div>
          <dt>Recebido em dinheiro</dt>
          <dd>{formatCents(closing.cash.receivedCents)}</dd>
        </div>
        <div>
          <dt>Troco dado</dt>
          <dd>{formatCents(-closing.cash.changeCents)}</dd>
        </div>
        <div>
          <dt>Sangrias</dt>
          <dd>{formatCents(-closing.cash.sangriasCents)}</dd>
        </div>
        <div>
          <dt>Suprimentos</dt>
          <dd>{formatCents(closing.cash.suprimentosCents)}</dd>
        </div>
      </dl>
      {closing.dynamicPix && <DynamicPixClosing pix={closing.dynamicPix} />}
      <p className="muted">
        {closing.sales.count} venda(s), {formatCents(closing.sales.totalCents)}
        {closing.sales.cancelledCount > 0 && `; ${closing.sales.cancelledCount} cancelada(s), fora do caixa (${formatCents(closing.sales.cancelledCents)})`}
        {closing.sales.contingencyCount > 0 && `; ${closing.sales.contingencyCount} em contingência`}.
      </p>
      {closing.printed ? (
        <p role="status">Relatório impresso.</p>
      ) : (
        <ErrorAlert error={`O relatório não foi impresso: ${closing.printError ?? 'impressora indisponível'}`} />
      )}
      <ErrorAlert error={error} />
      <details>
        <summary>Relatório como impresso</summary>
        <pre className="report" role="region" aria-label="Relatório de fechamento" tabIndex={0}>
          {closing.report.join('\n')}
        </pre>
      </details>
      <div className="dialog-actions">
        <button
          type="button"
          onClick={async () => {
            const failure = await printAgain(session.id);
            setError(failure?.message ?? null);
          }}
        >
          Imprimir de novo
        </button>
        <button type="button" onClick={() => void pdf()}>
          Baixar PDF
        </button>
        <button type="button" className="primary" onClick={onDone}>
          Concluir
        </button>
      </div>
    </div>
  );
}
