// F9: the recent receipts, their state and how long each can still be cancelled (ticking). The
// actions open the manager dialogs; past the window the way out is the return. Under a receipt
// issued in contingency, the online attempt of its sale it superseded, with what became of it.

import { useEffect, useState, type ReactNode } from 'react';
import type { ReceiptView, SupersededAttempt } from '../../electron/api/terminal-api.ts';
import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { formatCents } from '../money/money.ts';
import { formatDateTime, SUPERSEDED_STATE, WINDOW_OVER } from '../receipt/receipt-labels.ts';
import { StateBadge } from '../receipt/StateBadge.tsx';
import { mmss, refreshReceipts, secondsLeftNow, useReceipts } from '../state/receipts-store.ts';
import { closeDialog, openDialog, type ReceiptDialogKind } from '../state/ui-store.ts';

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

type Action = { kind: ReceiptDialogKind; label: string };

/** The row's actions, by what the receipt allows now. */
function actionsOf(r: ReceiptView, left: number | null): Action[] {
  const windowOpen = r.state === 'authorized' && r.cancellation.allowed && left !== 0;
  const actions: (Action | false)[] = [
    { kind: 'preview', label: 'Ver' },
    windowOpen && { kind: 'cancel', label: 'Cancelar NFC-e' },
    r.state === 'authorized' && !windowOpen && { kind: 'return', label: 'Devolução' },
    r.state === 'authorized' && { kind: 'reprint', label: 'Reimprimir' },
    r.canCorrect && { kind: 'correct', label: 'Corrigir e reenviar' },
    r.canVoid && { kind: 'void', label: 'Inutilizar número' },
  ];
  return actions.filter((a): a is Action => a !== false);
}

/** `back`: the action the list was left by, for this row; it takes the focus (or "Ver", when that action is gone). */
function Actions(props: { receipt: ReceiptView; left: number | null; back: ReceiptDialogKind | null }) {
  const { receipt: r, left, back } = props;
  const actions = actionsOf(r, left);
  const focused = back === null ? null : actions.some((a) => a.kind === back) ? back : 'preview';
  return (
    <div className="row-actions">
      {actions.map((a) => (
        <button
          key={a.kind}
          type="button"
          className="small"
          data-autofocus={a.kind === focused || undefined}
          onClick={() => openDialog({ kind: a.kind, receiptId: r.id })}
        >
          {a.label}
        </button>
      ))}
    </div>
  );
}

/** A row's first cells: which NFC-e, when the sale was issued and its total. */
function DocumentCells(props: { nNF: number; serie: number; receipt: ReceiptView; tag?: ReactNode }) {
  const { nNF, serie, receipt: r, tag } = props;
  return (
    <>
      <td data-label="NFC-e">
        nº {nNF} <span className="muted">série {serie}</span>
        {tag}
      </td>
      <td data-label="Emitida">{formatDateTime(r.createdAt)}</td>
      <td data-label="Total" className="num">
        {formatCents(r.totalCents)}
      </td>
    </>
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
      <DocumentCells nNF={a.nNF} serie={a.serie} receipt={r} />
      <td data-label="Situação">
        <span className={`badge ${done ? 'off' : a.state === 'blocked' ? 'bad' : 'wait'}`}>{SUPERSEDED_STATE[a.state]}</span>
        <div className="muted small-text">
          Venda emitida de novo em contingência na NFC-e nº {r.nNF} (série {r.serie})
        </div>
      </td>
      <td data-label="Tempo para cancelar">
        <span className="muted">—</span>
      </td>
      <td data-label="Ações" />
    </tr>
  );
}

export function ReceiptsDialog(props: { returnTo?: { receiptId: string; from: ReceiptDialogKind } }) {
  const { returnTo } = props;
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
                  <DocumentCells nNF={r.nNF} serie={r.serie} receipt={r} tag={r.contingency && <span className="tag">contingência</span>} />
                  <td data-label="Situação">
                    <StateBadge state={r.state} />
                    {r.attention && <div className="warn-text small-text">{r.attention}</div>}
                    {!r.attention && r.motivo && r.state === 'rejected' && (
                      <div className="warn-text small-text">
                        {r.codigoStatus} {r.motivo}
                      </div>
                    )}
                  </td>
                  <td data-label="Tempo para cancelar">
                    <CancelWindow receipt={r} left={left} />
                  </td>
                  <td data-label="Ações">
                    <Actions receipt={r} left={left} back={returnTo?.receiptId === r.id ? returnTo.from : null} />
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
