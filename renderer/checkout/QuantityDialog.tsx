// "*" (or the button): the selected line's quantity, changed in one step. The core strikes the
// line through and adds the product again with the new quantity, as the receipt tape records it.

import { useState } from 'react';
import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { useTerminalCall } from '../components/use-terminal-call.ts';
import type { InputError } from '../money/money.ts';
import { formatCents, formatQuantity, parseQuantity } from '../money/money.ts';
import { changeItemQuantity, useSale } from '../state/sale-store.ts';
import { closeDialog } from '../state/ui-store.ts';

export function QuantityDialog(props: { itemId: number }) {
  const item = useSale((s) => s.sale?.items.find((i) => i.id === props.itemId) ?? null);
  const [text, setText] = useState(item ? formatQuantity(item.quantity) : '');
  const { error, setError, busy, run } = useTerminalCall<string>();

  const submit = async () => {
    if (!item) return;
    let quantity: string;
    try {
      quantity = parseQuantity(text, 'Nova quantidade');
    } catch (err) {
      return setError((err as InputError).message);
    }
    await run(async () => {
      const failure = await changeItemQuantity(item.id, quantity);
      if (failure) throw failure;
      closeDialog();
    });
  };

  return (
    <Dialog title="Alterar quantidade" onClose={closeDialog}>
      {item && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <p>
            <strong>{item.description}</strong> · {formatCents(item.unitPriceCents)}/{item.unit} · agora {formatQuantity(item.quantity)} {item.unit}
          </p>
          <label className="field">
            <span>Nova quantidade ({item.unit})</span>
            <input
              className="big-input"
              inputMode="decimal"
              autoComplete="off"
              value={text}
              onFocus={(e) => e.target.select()}
              onChange={(e) => setText(e.target.value)}
            />
          </label>
          <ErrorAlert error={error} />
          <div className="dialog-actions">
            <button type="button" onClick={closeDialog}>
              Voltar
            </button>
            <button type="submit" className="primary" disabled={busy}>
              Alterar quantidade <kbd>Enter</kbd>
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
