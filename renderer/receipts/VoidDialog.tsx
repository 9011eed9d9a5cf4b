// A rejected receipt whose sale is abandoned: the manager voids its number (inutilização).

import { useState } from 'react';
import type { ManagerAuthorization } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { JustificationField, justificationOk } from '../components/JustificationField.tsx';
import { emptyAuthorization, ManagerFields } from '../components/ManagerFields.tsx';
import { receiptUpdated } from '../state/receipts-store.ts';
import { terminal } from '../state/terminal.ts';
import { openDialog } from '../state/ui-store.ts';
import { ReceiptHeading } from './ReceiptHeading.tsx';
import { useReceipt } from './use-receipt.ts';

export function VoidDialog(props: { receiptId: string }) {
  const { receiptId } = props;
  const receipt = useReceipt(receiptId);
  const [auth, setAuth] = useState<ManagerAuthorization>(emptyAuthorization);
  const [justification, setJustification] = useState('');
  const [error, setError] = useState<TerminalFailure | null>(null);
  const [busy, setBusy] = useState(false);
  const back = () => openDialog({ kind: 'receipts' });
  const done = receipt && (receipt.state === 'voided' || receipt.state === 'voiding');

  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      receiptUpdated(await terminal().voidReceipt(receiptId, { ...auth, justification: justification.trim() }));
    } catch (err) {
      setError(asFailure(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title="Inutilizar número" onClose={back}>
      {receipt && <ReceiptHeading receipt={receipt} />}
      {done ? (
        <>
          <p role="status">{receipt.state === 'voided' ? 'Número inutilizado.' : 'Inutilização enviada; aguardando a SEFAZ.'}</p>
          <div className="dialog-actions">
            <button type="button" className="primary" onClick={back} autoFocus>
              Voltar aos recibos
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
          <p>A venda será abandonada e o número desta NFC-e inutilizado na SEFAZ.</p>
          <ManagerFields value={auth} onChange={setAuth} />
          <JustificationField label="Justificativa da inutilização" value={justification} onChange={setJustification} />
          <ErrorAlert error={error} />
          <div className="dialog-actions">
            <button type="button" onClick={back}>
              Voltar
            </button>
            <button type="submit" className="danger" disabled={busy || !auth.managerId || !auth.pin || !justificationOk(justification)}>
              Inutilizar
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
