// "Ver" in the receipts list: the receipt's DANFE as printed.

import { Dialog } from '../components/Dialog.tsx';
import { ReceiptPreview } from '../receipt/ReceiptPreviewImage.tsx';
import { backToReceipts } from '../state/ui-store.ts';
import { ReceiptHeading } from './ReceiptHeading.tsx';
import { useReceipt } from './use-receipt.ts';

export function PreviewDialog(props: { receiptId: string }) {
  const { receiptId } = props;
  const receipt = useReceipt(receiptId);
  return (
    <Dialog title="DANFE NFC-e" onClose={() => backToReceipts(receiptId, 'preview')}>
      {receipt && (
        <>
          <ReceiptHeading receipt={receipt} />
          <ReceiptPreview receipt={receipt} />
        </>
      )}
    </Dialog>
  );
}
