// A manager cancels an authorized receipt inside the window: PIN and a 15–255 character
// justification. Past the window (remedy 'devolucao', or the core's prazo_expirado) the dialog
// says why and offers the return instead.

import { useState } from 'react';
import { Dialog } from '../components/Dialog.tsx';
import { WINDOW_OVER } from '../receipt/receipt-labels.ts';
import { receiptAction } from '../state/receipt-actions.ts';
import { terminal } from '../state/terminal.ts';
import { backToReceipts, openDialog } from '../state/ui-store.ts';
import { BackToReceipts } from './BackToReceipts.tsx';
import { JustifiedManagerForm } from './JustifiedManagerForm.tsx';
import { ReceiptHeading } from './ReceiptHeading.tsx';
import { useReceipt } from './use-receipt.ts';

export function CancelDialog(props: { receiptId: string }) {
  const { receiptId } = props;
  const receipt = useReceipt(receiptId);
  const [refusedAsLate, setRefusedAsLate] = useState(false);
  const back = () => backToReceipts(receiptId, 'cancel');

  const windowOver = refusedAsLate || (receipt?.state === 'authorized' && receipt.cancellation.remedy === 'devolucao');
  const done = receipt && (receipt.state === 'cancelled' || receipt.state === 'cancelling');

  return (
    <Dialog title="Cancelar NFC-e" onClose={back}>
      {receipt && <ReceiptHeading receipt={receipt} />}
      {done ? (
        <>
          <p role="status">{receipt.state === 'cancelled' ? 'NFC-e cancelada.' : 'Cancelamento enviado; aguardando a SEFAZ.'}</p>
          <BackToReceipts onBack={back} />
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
        <JustifiedManagerForm
          justificationLabel="Justificativa do cancelamento"
          confirmLabel="Confirmar cancelamento"
          onBack={back}
          onConfirm={(input) => receiptAction(() => terminal().cancelReceipt(receiptId, input))}
          onFailure={(failure) => setRefusedAsLate(failure.code === 'prazo_expirado')}
        />
      )}
    </Dialog>
  );
}
