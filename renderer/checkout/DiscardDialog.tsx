// F8: giving up the sale on the counter (nothing was issued yet, so nothing fiscal to undo).

import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { discardSale, useSale } from '../state/sale-store.ts';
import { closeDialog } from '../state/ui-store.ts';

export function DiscardDialog() {
  const error = useSale((s) => s.error);
  return (
    <Dialog title="Cancelar venda" onClose={closeDialog}>
      <p>Descartar a venda em andamento? Os itens lançados serão removidos. Nenhuma NFC-e foi emitida para ela.</p>
      <ErrorAlert error={error} />
      <div className="dialog-actions">
        <button type="button" onClick={closeDialog}>
          Voltar
        </button>
        <button
          type="button"
          className="danger"
          onClick={async () => {
            await discardSale();
            if (!useSale.getState().error) closeDialog();
          }}
        >
          Descartar venda
        </button>
      </div>
    </Dialog>
  );
}
