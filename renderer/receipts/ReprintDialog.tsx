// A second copy of an authorized receipt: the manager's PIN and why (audit log).

import { useState } from 'react';
import type { ManagerAuthorization } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { emptyAuthorization, ManagerFields } from '../components/ManagerFields.tsx';
import { refreshPrints } from '../state/status-store.ts';
import { terminal } from '../state/terminal.ts';
import { backToReceipts } from '../state/ui-store.ts';
import { ReceiptHeading } from './ReceiptHeading.tsx';
import { useReceipt } from './use-receipt.ts';
import { BackToReceipts } from './BackToReceipts.tsx';

export function ReprintDialog(props: { receiptId: string }) {
  const { receiptId } = props;
  const receipt = useReceipt(receiptId);
  const [auth, setAuth] = useState<ManagerAuthorization>(emptyAuthorization);
  const [reason, setReason] = useState('Segunda via pedida pelo cliente');
  const [error, setError] = useState<TerminalFailure | null>(null);
  const [done, setDone] = useState(false);
  const back = () => backToReceipts(receiptId, 'reprint');

  const submit = async () => {
    setError(null);
    try {
      await terminal().reprint(receiptId, { ...auth, reason: reason.trim() });
      setDone(true);
      void refreshPrints();
    } catch (err) {
      setError(asFailure(err));
    }
  };

  return (
    <Dialog title="Reimprimir NFC-e" onClose={back}>
      {receipt && <ReceiptHeading receipt={receipt} />}
      {done ? (
        <>
          <p role="status">Reimpressão enviada para a impressora.</p>
          <BackToReceipts onBack={back} />
        </>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <ManagerFields value={auth} onChange={setAuth} focusPin />
          <label className="field">
            <span>Motivo da reimpressão</span>
            <input autoComplete="off" value={reason} onChange={(e) => setReason(e.target.value)} />
          </label>
          <ErrorAlert error={error} />
          <div className="dialog-actions">
            <button type="button" onClick={back}>
              Voltar
            </button>
            <button type="submit" className="primary" disabled={!auth.managerId || !auth.pin || !reason.trim()}>
              Reimprimir
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
