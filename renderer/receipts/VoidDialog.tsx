// A rejected receipt whose sale is abandoned: the manager voids its number (inutilização).

import { Dialog } from '../components/Dialog.tsx';
import { receiptAction } from '../state/receipt-actions.ts';
import { terminal } from '../state/terminal.ts';
import { backToReceipts } from '../state/ui-store.ts';
import { BackToReceipts } from './BackToReceipts.tsx';
import { JustifiedManagerForm } from './JustifiedManagerForm.tsx';
import { ReceiptHeading } from './ReceiptHeading.tsx';
import { useReceipt } from './use-receipt.ts';

export function VoidDialog(props: { receiptId: string }) {
  const { receiptId } = props;
  const receipt = useReceipt(receiptId);
  const back = () => backToReceipts(receiptId, 'void');
  const done = receipt && (receipt.state === 'voided' || receipt.state === 'voiding');

  return (
    <Dialog title="Inutilizar número" onClose={back}>
      {receipt && <ReceiptHeading receipt={receipt} />}
      {done ? (
        <>
          <p role="status">{receipt.state === 'voided' ? 'Número inutilizado.' : 'Inutilização enviada; aguardando a SEFAZ.'}</p>
          <BackToReceipts onBack={back} />
        </>
      ) : (
        <JustifiedManagerForm
          intro={<p>A venda será abandonada e o número desta NFC-e inutilizado na SEFAZ.</p>}
          justificationLabel="Justificativa da inutilização"
          confirmLabel="Inutilizar"
          onBack={back}
          onConfirm={(input) => receiptAction(() => terminal().voidReceipt(receiptId, input))}
        />
      )}
    </Dialog>
  );
}
