// The checkout screen: status bar, the counter (product input, lines, total, commands) or the
// receipt of the sale just finished, the printer's recent jobs, and one dialog at a time.

import { useCallback, useEffect, useRef } from 'react';
import { Announcer } from '../a11y/Announcer.tsx';
import { useAnnouncements } from '../a11y/use-announcements.ts';
import { CashDialog } from '../cash/CashDialog.tsx';
import { TillClosedPanel } from '../cash/TillClosedPanel.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { ConsumerDialog } from '../checkout/ConsumerDialog.tsx';
import { DiscardDialog } from '../checkout/DiscardDialog.tsx';
import { ItemsList } from '../checkout/ItemsList.tsx';
import { ProductEntry } from '../checkout/ProductEntry.tsx';
import { QuantityDialog } from '../checkout/QuantityDialog.tsx';
import { TotalPanel } from '../checkout/TotalPanel.tsx';
import { PaymentDialog } from '../payment/PaymentDialog.tsx';
import { PrintsPanel } from '../prints/PrintsPanel.tsx';
import { ReceiptPanel } from '../receipt/ReceiptPanel.tsx';
import { CancelDialog } from '../receipts/CancelDialog.tsx';
import { CorrectDialog } from '../receipts/CorrectDialog.tsx';
import { PreviewDialog } from '../receipts/PreviewDialog.tsx';
import { ReceiptsDialog } from '../receipts/ReceiptsDialog.tsx';
import { ReprintDialog } from '../receipts/ReprintDialog.tsx';
import { ReturnDialog } from '../receipts/ReturnDialog.tsx';
import { VoidDialog } from '../receipts/VoidDialog.tsx';
import { SettingsDialog } from '../settings/SettingsDialog.tsx';
import { tillKnownClosed, useCash } from '../state/cash-store.ts';
import { clearSaleError, useSale } from '../state/sale-store.ts';
import { useUi, type DialogState } from '../state/ui-store.ts';
import { StatusBar } from '../status/StatusBar.tsx';
import { ActionBar } from './ActionBar.tsx';
import { useShortcuts } from './use-shortcuts.ts';

function CurrentDialog(props: { dialog: DialogState }) {
  const { dialog } = props;
  switch (dialog.kind) {
    case 'none':
      return null;
    case 'payment':
      return <PaymentDialog />;
    case 'consumer':
      return <ConsumerDialog />;
    case 'discard':
      return <DiscardDialog />;
    case 'receipts':
      return <ReceiptsDialog returnTo={dialog.returnTo} />;
    case 'quantity':
      return <QuantityDialog key={dialog.itemId} itemId={dialog.itemId} />;
    case 'cancel':
      return <CancelDialog key={dialog.receiptId} receiptId={dialog.receiptId} />;
    case 'return':
      return <ReturnDialog key={dialog.receiptId} receiptId={dialog.receiptId} />;
    case 'correct':
      return <CorrectDialog key={dialog.receiptId} receiptId={dialog.receiptId} />;
    case 'void':
      return <VoidDialog key={dialog.receiptId} receiptId={dialog.receiptId} />;
    case 'reprint':
      return <ReprintDialog key={dialog.receiptId} receiptId={dialog.receiptId} />;
    case 'preview':
      return <PreviewDialog key={dialog.receiptId} receiptId={dialog.receiptId} />;
    case 'settings':
      return <SettingsDialog />;
    case 'cash':
      return <CashDialog />;
  }
}

export function App() {
  const sale = useSale((s) => s.sale);
  const finished = useSale((s) => s.finished);
  const selectedItemId = useSale((s) => s.selectedItemId);
  const error = useSale((s) => s.error);
  const dialog = useUi((s) => s.dialog);
  const inputRef = useRef<HTMLInputElement>(null);
  const quantityRef = useRef<HTMLInputElement>(null);
  // The counter gives way to opening the till, even over the last sale's receipt.
  const tillClosed = useCash(tillKnownClosed);
  const showReceipt = !tillClosed && finished !== null && (sale === null || sale.items.length === 0);

  const focusQuantity = useCallback(() => quantityRef.current?.select(), []);
  useShortcuts(focusQuantity);
  useAnnouncements();

  // The product input keeps the focus whenever nothing else asked for it: after a dialog
  // closes, after a button was clicked or tapped, after the receipt panel gives way to a new
  // sale. Tab still reaches every button (focus moved by the keyboard is left alone).
  useEffect(() => {
    if (dialog.kind !== 'none' || showReceipt || tillClosed) return;
    const refocus = (alsoFromButton: boolean) => () => {
      setTimeout(() => {
        const el = document.activeElement;
        const lost = el === null || el === document.body || (alsoFromButton && el.tagName === 'BUTTON');
        if (lost && useUi.getState().dialog.kind === 'none') inputRef.current?.focus();
      }, 0);
    };
    const onFocusOut = refocus(false);
    const onClick = refocus(true);
    onFocusOut();
    document.addEventListener('focusout', onFocusOut);
    document.addEventListener('click', onClick);
    return () => {
      document.removeEventListener('focusout', onFocusOut);
      document.removeEventListener('click', onClick);
    };
  }, [dialog.kind, showReceipt, tillClosed]);

  return (
    <div className="app">
      <StatusBar />
      <main className="main">
        <div className="checkout">
          {showReceipt ? (
            <ReceiptPanel key={finished.receipt.id} finished={finished} />
          ) : tillClosed ? (
            <TillClosedPanel />
          ) : (
            <>
              <ProductEntry inputRef={inputRef} quantityRef={quantityRef} />
              <ErrorAlert error={error} onDismiss={clearSaleError} />
              <ItemsList sale={sale} selectedItemId={selectedItemId} />
            </>
          )}
        </div>
        <aside className="side">
          <TotalPanel sale={showReceipt ? finished.sale : sale} />
          <ActionBar sale={sale} tillClosed={tillClosed} selectedItemId={selectedItemId} onQuantity={focusQuantity} />
          <PrintsPanel />
        </aside>
      </main>
      <CurrentDialog dialog={dialog} />
      <Announcer />
    </div>
  );
}
