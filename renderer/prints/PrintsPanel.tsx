// What the printer got lately (receipts and the till's closing reports): with the virtual printer
// this is how the cashier "sees" the paper.

import { useEffect } from 'react';
import { COPY_LABEL, formatTime } from '../receipt/receipt-labels.ts';
import { useReceipts } from '../state/receipts-store.ts';
import { refreshPrints, useStatus } from '../state/status-store.ts';

export function PrintsPanel() {
  const prints = useStatus((s) => s.prints);
  const error = useStatus((s) => s.printsError);
  const receipts = useReceipts((s) => s.receipts);
  useEffect(() => {
    const t = setInterval(() => void refreshPrints(), 5000);
    return () => clearInterval(t);
  }, []);
  const number = (id: string) => receipts.find((r) => r.id === id)?.nNF;

  return (
    <section className="prints" aria-labelledby="prints-title">
      <h2 id="prints-title">Impressões recentes</h2>
      {error ? (
        <p role="alert" className="muted">
          {error.message}
        </p>
      ) : prints.length === 0 ? (
        <p className="muted">Nada impresso ainda.</p>
      ) : (
        <ul>
          {prints.map((p) => {
            if (p.kind === 'fechamento') {
              return (
                <li key={`caixa-${p.cashSessionNumber}-${p.printedAt}`}>
                  <span>Fechamento do caixa nº {p.cashSessionNumber}</span> <time dateTime={p.printedAt}>{formatTime(p.printedAt)}</time>
                </li>
              );
            }
            const n = number(p.receiptId);
            return (
              <li key={`${p.receiptId}-${p.copy}-${p.printedAt}`}>
                <span>{n !== undefined ? `NFC-e nº ${n}` : 'NFC-e'}</span> <span className="muted">{COPY_LABEL[p.copy] ?? p.copy}</span>{' '}
                <time dateTime={p.printedAt}>{formatTime(p.printedAt)}</time>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
