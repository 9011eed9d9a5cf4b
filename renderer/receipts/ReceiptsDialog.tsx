// F9: the recent receipts, their state and how long each can still be cancelled (ticking). The
// actions open the manager dialogs; past the window the way out is the return. Under a receipt
// issued in contingency, the online attempt of its sale it superseded, with what became of it.

import { useEffect, useState } from 'react';
import type { ReceiptView, SupersededAttempt } from '../../electron/api/terminal-api.ts';
import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { formatCents } from '../money/money.ts';
import { formatDateTime, SUPERSEDED_STATE, WINDOW_OVER } from '../receipt/receipt-labels.ts';
import { StateBadge } from '../receipt/StateBadge.tsx';
import { mmss, refreshReceipts, secondsLeftNow, useReceipts } from '../state/receipts-store.ts';
import { closeDialog, openDialog } from '../state/ui-store.ts';

function useNow(intervalMs: number): number {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    const t = setInterval(() => setNow(performance.now()), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs]);
  return now;
}

function CancelWindow(props: { receipt: ReceiptView; left: number | null }) {
  const { receipt, left } = props;
  if (receipt.state !== 'authorized') return <span className="muted">—</span>;
  if (receipt.cancellation.remedy === 'devolucao' || left === 0) return <span className="warn-text">{WINDOW_OVER}</span>;
  if (left === null) return <span className="muted">—</span>;
  return (
    <span className="countdown" aria-label={`Tempo restante para cancelar: ${mmss(left)}`}>
      {mmss(left)}
    </span>
  );
}

function Actions(props: { receipt: ReceiptView; left: number | null }) {
  const { receipt: r, left } = props;
  const windowOpen = r.state === 'authorized' && r.cancellation.allowed && left !== 0;
  const returnable = r.state === 'authorized' && !windowOpen;
  return (
    <div className="row-actions">
      <button type="button" className="small" onClick={() => openDialog({ kind: 'preview', receiptId: r.id })}>
        Ver
      </button>
      {windowOpen && (
        <button type="button" className="small" onClick={() => openDialog({ kind: 'cancel', receiptId: r.id })}>
          Cancelar NFC-e
        </button>
      )}
      {returnable && (
        <button type="button" className="small" onClick={() => openDialog({ kind: 'return', receiptId: r.id })}>
          Devolução
        </button>
      )}
      {r.state === 'authorized' && (
        <button type="button" className="small" onClick={() => openDialog({ kind: 'reprint', receiptId: r.id })}>
          Reimprimir
        </button>
      )}
      {r.canCorrect && (
        <button type="button" className="small" onClick={() => openDialog({ kind: 'correct', receiptId: r.id })}>
          Corrigir e reenviar
        </button>
      )}
      {r.canVoid && (
        <button type="button" className="small" onClick={() => openDialog({ kind: 'void', receiptId: r.id })}>
          Inutilizar número
        </button>
      )}
    </div>
  );
}

/**
 * The online attempt of a sale issued again in contingency, under the receipt that covers the
 * sale now: it is a document of its own (cancelled by substitution, or its number voided), and
 * the accountant's file holds it.
 */
function SupersededRow(props: { attempt: SupersededAttempt; receipt: ReceiptView }) {
  const { attempt: a, receipt: r } = props;
  const done = a.state === 'cancelled_by_substitution' || a.state === 'cancelled' || a.state === 'voided';
  return (
    <tr aria-label={`NFC-e nº ${a.nNF}`}>
      <td>
        nº {a.nNF} <span className="muted">série {a.serie}</span>
      </td>
      <td>{formatDateTime(r.createdAt)}</td>
      <td className="num">{formatCents(r.totalCents)}</td>
      <td>
        <span className={`badge ${done ? 'off' : a.state === 'blocked' ? 'bad' : 'wait'}`}>{SUPERSEDED_STATE[a.state]}</span>
        <div className="muted small-text">
          Venda emitida de novo em contingência na NFC-e nº {r.nNF} (série {r.serie})
        </div>
      </td>
      <td>
        <span className="muted">—</span>
      </td>
      <td />
    </tr>
  );
}

export function ReceiptsDialog() {
  const receipts = useReceipts((s) => s.receipts);
  const fetchedAt = useReceipts((s) => s.fetchedAt);
  const error = useReceipts((s) => s.error);
  const now = useNow(1000);
  useEffect(() => {
    void refreshReceipts();
  }, []);
  // A countdown that reaches zero asks the core again, which judges on the service's clock: the
  // row then offers what the core says (the return), not what the local countdown guessed.
  const windowClosed = receipts.some((r) => r.state === 'authorized' && r.cancellation.allowed && secondsLeftNow(r, fetchedAt[r.id], now) === 0);
  useEffect(() => {
    if (windowClosed) void refreshReceipts();
  }, [windowClosed]);

  return (
    <Dialog title="Recibos recentes" onClose={closeDialog} wide>
      <ErrorAlert error={error} />
      {receipts.length === 0 ? (
        <p className="muted">Nenhuma NFC-e emitida ainda.</p>
      ) : (
        <table className="receipts">
          <thead>
            <tr>
              <th scope="col">NFC-e</th>
              <th scope="col">Emitida</th>
              <th scope="col" className="num">
                Total
              </th>
              <th scope="col">Situação</th>
              <th scope="col">Tempo para cancelar</th>
              <th scope="col">Ações</th>
            </tr>
          </thead>
          <tbody>
            {receipts.map((r) => {
              const left = secondsLeftNow(r, fetchedAt[r.id], now);
              return [
                <tr key={r.id} aria-label={`NFC-e nº ${r.nNF}`}>
                  <td>
                    nº {r.nNF} <span className="muted">série {r.serie}</span>
                    {r.contingency && <span className="tag">contingência</span>}
                  </td>
                  <td>{formatDateTime(r.createdAt)}</td>
                  <td className="num">{formatCents(r.totalCents)}</td>
                  <td>
                    <StateBadge state={r.state} />
                    {r.attention && <div className="warn-text small-text">{r.attention}</div>}
                    {!r.attention && r.motivo && r.state === 'rejected' && (
                      <div className="warn-text small-text">
                        {r.codigoStatus} {r.motivo}
                      </div>
                    )}
                  </td>
                  <td>
                    <CancelWindow receipt={r} left={left} />
                  </td>
                  <td>
                    <Actions receipt={r} left={left} />
                  </td>
                </tr>,
                ...r.superseded.map((a) => <SupersededRow key={`${r.id}-${a.serie}-${a.nNF}`} attempt={a} receipt={r} />),
              ];
            })}
          </tbody>
        </table>
      )}
    </Dialog>
  );
}
