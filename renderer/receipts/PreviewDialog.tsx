import { Dialog } from '../components/Dialog.tsx';
import { ReceiptPreviewImage } from '../receipt/ReceiptPreviewImage.tsx';
import { openDialog } from '../state/ui-store.ts';
import { ReceiptHeading } from './ReceiptHeading.tsx';
import { useReceipt } from './use-receipt.ts';

export function PreviewDialog(props: { receiptId: string }) {
  const receipt = useReceipt(props.receiptId);
  return (
    <Dialog title="DANFE NFC-e" onClose={() => openDialog({ kind: 'receipts' })}>
      {receipt && (
        <>
          <ReceiptHeading receipt={receipt} />
          <div className="receipt-preview">
            <ReceiptPreviewImage receipt={receipt} />
          </div>
        </>
      )}
    </Dialog>
  );
}
