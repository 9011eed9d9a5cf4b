// F4: the consumer's CPF or CNPJ on the receipt (optional). Checked here as it is typed, and by
// the core again when it is set.

import { useState } from 'react';
import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { checkConsumerDocument, formatDocument } from '../documents/consumer-document.ts';
import { setConsumer, useSale } from '../state/sale-store.ts';
import { closeDialog } from '../state/ui-store.ts';

export function ConsumerDialog() {
  const current = useSale((s) => s.sale?.consumer ?? null);
  const [text, setText] = useState(current ? formatDocument(current.document) : '');
  const [error, setError] = useState<string | null>(null);
  const check = text.trim() ? checkConsumerDocument(text) : null;

  const save = async () => {
    const c = checkConsumerDocument(text);
    if (!c.ok) {
      setError(c.message);
      return;
    }
    const failure = await setConsumer(c.digits);
    if (failure) setError(failure.message);
    else closeDialog();
  };

  const remove = async () => {
    const failure = await setConsumer(null);
    if (failure) setError(failure.message);
    else closeDialog();
  };

  return (
    <Dialog title="Consumidor" onClose={closeDialog}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label className="field">
          <span>CPF ou CNPJ do consumidor</span>
          <input
            className="big-input"
            inputMode="numeric"
            autoComplete="off"
            value={text}
            aria-invalid={check !== null && !check.ok}
            onChange={(e) => {
              setText(e.target.value);
              setError(null);
            }}
          />
        </label>
        {check?.ok && (
          <p className="hint">
            {check.kind.toUpperCase()} {check.formatted}
          </p>
        )}
        <ErrorAlert error={error} />
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
