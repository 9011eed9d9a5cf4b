// After "Finalizar": the receipt of the sale just made, its state following the core live
// (pendente → processando → autorizada ...), the DANFE preview, the change, and the way to the
// next sale (Enter, or just scanning the next item). "Imprimir" prints the copy the printer
// never produced (the automatic print failed); a further copy is a reprint, which the manager
// authorizes from the recent receipts (F9).

import { useEffect, useRef, useState } from 'react';
import type { FinishedSale } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { formatDocument } from '../documents/consumer-document.ts';
import { formatCents } from '../money/money.ts';
import { newSale } from '../state/sale-store.ts';
import { refreshPrints } from '../state/status-store.ts';
import { terminal } from '../state/terminal.ts';
import { ReceiptPreview } from './ReceiptPreviewImage.tsx';
import { StateBadge } from './StateBadge.tsx';

export function ReceiptPanel(props: { finished: FinishedSale }) {
  const { sale, receipt } = props.finished;
  const nextRef = useRef<HTMLButtonElement>(null);
  const [printError, setPrintError] = useState<TerminalFailure | null>(null);
  const [printed, setPrinted] = useState(false);
  const showPreview = receipt.state === 'authorized' || receipt.state === 'cancelled' || receipt.contingency;

  useEffect(() => {
    nextRef.current?.focus();
    // The next customer's first scan starts the next sale without pressing "Nova venda".
    const onKey = (e: KeyboardEvent) => {
      const el = document.activeElement;
      if (e.ctrlKey || e.altKey || e.metaKey || e.key.length !== 1 || e.key === ' ') return;
      if (el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT')) return;
      if (document.querySelector('[role="dialog"]')) return;
      e.preventDefault();
      newSale(e.key);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const print = async () => {
    setPrintError(null);
    setPrinted(false);
    try {
      await terminal().printReceipt(receipt.id);
      setPrinted(true);
      void refreshPrints();
    } catch (err) {
      setPrintError(asFailure(err));
    } finally {
      // Enter goes on to the next sale, as before the click (never prints again by accident).
      nextRef.current?.focus();
    }
  };

  return (
    <section className="receipt-panel" aria-labelledby="receipt-title">
      <div className="receipt-info">
        <h2 id="receipt-title">Venda concluída</h2>
        <p className="receipt-number">
          NFC-e nº {receipt.nNF} · série {receipt.serie}
        </p>
        <p className="receipt-state" role="status" aria-live="polite">
          Situação: <StateBadge state={receipt.state} />
        </p>
        {receipt.contingency && <p className="warn-text">Emitida em contingência offline: será transmitida quando o serviço voltar.</p>}
        {receipt.motivo && receipt.state !== 'authorized' && (
          <p>
            Retorno da SEFAZ: {receipt.codigoStatus} {receipt.motivo}
          </p>
        )}
        {receipt.attention && <ErrorAlert error={receipt.attention} />}
        {receipt.protocolo && <p className="muted">Protocolo {receipt.protocolo}</p>}
        <dl className="summary">
          <div>
            <dt>Total</dt>
            <dd className="strong">{formatCents(sale.totalCents)}</dd>
          </div>
          <div>
            <dt>Troco</dt>
            <dd className="strong change">{formatCents(sale.changeCents)}</dd>
          </div>
        </dl>
        {sale.consumer && (
          <p>
            Consumidor: {sale.consumer.kind.toUpperCase()} {formatDocument(sale.consumer.document)}
          </p>
        )}
        <div className="dialog-actions">
          <button type="button" disabled={receipt.state !== 'authorized' && !receipt.contingency} onClick={() => void print()}>
            Imprimir
          </button>
          <button ref={nextRef} type="button" className="primary" onClick={() => newSale()}>
            Nova venda <kbd>Enter</kbd>
          </button>
        </div>
        {printed && <p role="status">DANFE enviado para a impressora.</p>}
        <ErrorAlert error={printError} />
      </div>
      <ReceiptPreview receipt={receipt} placeholder={showPreview ? null : 'O DANFE aparece aqui quando a NFC-e for autorizada.'} />
    </section>
  );
}
