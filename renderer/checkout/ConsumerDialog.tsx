// F4: the consumer's CPF or CNPJ on the receipt (optional). Checked here as it is typed, and by
// the core again when it is set.

import { Dialog } from '../components/Dialog.tsx';
import { formatDocument } from '../documents/consumer-document.ts';
import { setConsumer, useSale } from '../state/sale-store.ts';
import { closeDialog } from '../state/ui-store.ts';
import { ConsumerDocumentField, useConsumerDocument } from './ConsumerDocumentField.tsx';

export function ConsumerDialog() {
  const current = useSale((s) => s.sale?.consumer ?? null);
  const entry = useConsumerDocument(current ? formatDocument(current.document) : '', closeDialog);

  const remove = async () => {
    const failure = await setConsumer(null);
    if (failure) entry.setError(failure.message);
    else closeDialog();
  };

  return (
    <Dialog title="Consumidor" onClose={closeDialog}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void entry.save();
        }}
      >
        <ConsumerDocumentField entry={entry} />
        <div className="dialog-actions">
          {current && (
            <button type="button" onClick={() => void remove()}>
              Remover consumidor
            </button>
          )}
          <button type="submit" className="primary">
            Confirmar <kbd>Enter</kbd>
          </button>
        </div>
      </form>
    </Dialog>
  );
}
