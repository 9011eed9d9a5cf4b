// A manager cancels an authorized receipt inside the window: PIN and a 15–255 character
// justification. Past the window (remedy 'devolucao', or the core's prazo_expirado) the dialog
// says why and offers the return instead.

import { useState } from 'react';
import type { ManagerAuthorization } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { JustificationField, justificationOk } from '../components/JustificationField.tsx';
import { emptyAuthorization, ManagerFields } from '../components/ManagerFields.tsx';
import { WINDOW_OVER } from '../receipt/receipt-labels.ts';
import { receiptUpdated } from '../state/receipts-store.ts';
import { receiptChanged } from '../state/sale-store.ts';
import { terminal } from '../state/terminal.ts';
import { openDialog } from '../state/ui-store.ts';
import { ReceiptHeading } from './ReceiptHeading.tsx';
import { useReceipt } from './use-receipt.ts';

export function CancelDialog(props: { receiptId: string }) {
  const { receiptId } = props;
  const receipt = useReceipt(receiptId);
  const [auth, setAuth] = useState<ManagerAuthorization>(emptyAuthorization);
  const [justification, setJustification] = useState('');
  const [error, setError] = useState<TerminalFailure | null>(null);
  const [busy, setBusy] = useState(false);
  const back = () => openDialog({ kind: 'receipts' });

  const windowOver = error?.code === 'prazo_expirado' || (receipt?.state === 'authorized' && receipt.cancellation.remedy === 'devolucao');
  const done = receipt && (receipt.state === 'cancelled' || receipt.state === 'cancelling');

  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await terminal().cancelReceipt(receiptId, { ...auth, justification: justification.trim() });
      receiptUpdated(r);
      receiptChanged(r);
    } catch (err) {
      setError(asFailure(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title="Cancelar NFC-e" onClose={back}>
      {receipt && <ReceiptHeading receipt={receipt} />}
      {done ? (
        <>
          <p role="status">{receipt.state === 'cancelled' ? 'NFC-e cancelada.' : 'Cancelamento enviado; aguardando a SEFAZ.'}</p>
          <div className="dialog-actions">
            <button type="button" className="primary" onClick={back} autoFocus>
              Voltar aos recibos
            </button>
          </div>
        </>
      ) : windowOver ? (
        <>
          <div role="alert" className="alert">
            <strong>{WINDOW_OVER}.</strong> A NFC-e não pode mais ser cancelada; para desfazer a venda, emita a devolução (NF-e de devolução).
          </div>
          <div className="dialog-actions">
            <button type="button" onClick={back}>
              Voltar
            </button>
            <button type="button" className="primary" autoFocus onClick={() => openDialog({ kind: 'return', receiptId })}>
              Devolução
            </button>
          </div>
        </>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <ManagerFields value={auth} onChange={setAuth} />
          <JustificationField label="Justificativa do cancelamento" value={justification} onChange={setJustification} />
          <ErrorAlert error={error} />
          <div className="dialog-actions">
            <button type="button" onClick={back}>
              Voltar
            </button>
            <button type="submit" className="danger" disabled={busy || !auth.managerId || !auth.pin || !justificationOk(justification)}>
              Confirmar cancelamento
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
