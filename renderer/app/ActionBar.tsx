// The counter's commands, each with its key shown on the button and declared to assistive
// technology (aria-keyshortcuts): this bar is the screen's list of shortcuts. The keys work
// anywhere on the checkout screen (use-shortcuts.ts); * and Delete act on the selected line
// from the product input (ProductEntry.tsx). With the till closed no sale can be made: the
// sale's commands are off and none of them is the one to press; the receipts (a cancellation
// after the closing), the manager and "Caixa" stay on.

import type { SaleView } from '../../electron/api/terminal-api.ts';
import { removeItem } from '../state/sale-store.ts';
import { openDialog } from '../state/ui-store.ts';

export function ActionBar(props: { sale: SaleView | null; tillClosed: boolean; selectedItemId: number | null; onQuantity: () => void }) {
  const { sale, tillClosed, selectedItemId, onQuantity } = props;
  const payable = !tillClosed && !!sale && sale.totalCents > 0;
  const line = tillClosed ? null : (sale?.items.find((i) => i.id === selectedItemId && !i.removed) ?? null);
  return (
    <nav className="actions" aria-label="Comandos do caixa">
      <button
        type="button"
        className={payable ? 'primary' : undefined}
        aria-keyshortcuts="F2"
        disabled={!payable}
        onClick={() => openDialog({ kind: 'payment' })}
      >
        <kbd>F2</kbd> Pagamento
      </button>
      <button type="button" aria-keyshortcuts="F3" disabled={tillClosed} onClick={onQuantity}>
        <kbd>F3</kbd> Quantidade
      </button>
      <button type="button" aria-keyshortcuts="*" disabled={!line} onClick={() => line && openDialog({ kind: 'quantity', itemId: line.id })}>
        <kbd>*</kbd> Alterar qtd. do item
      </button>
      <button type="button" aria-keyshortcuts="Delete" disabled={!line} onClick={() => line && void removeItem(line.id)}>
        <kbd>Del</kbd> Remover item
      </button>
      <button type="button" aria-keyshortcuts="F4" disabled={tillClosed} onClick={() => openDialog({ kind: 'consumer' })}>
        <kbd>F4</kbd> Consumidor
      </button>
      <button type="button" aria-keyshortcuts="F8" disabled={tillClosed || !sale} onClick={() => openDialog({ kind: 'discard' })}>
        <kbd>F8</kbd> Cancelar venda
      </button>
      <button type="button" aria-keyshortcuts="F9" onClick={() => openDialog({ kind: 'receipts' })}>
        <kbd>F9</kbd> Recibos
      </button>
      <button type="button" aria-keyshortcuts="F10" onClick={() => openDialog({ kind: 'settings' })}>
        <kbd>F10</kbd> Gerente
      </button>
      {/* No function key: F1, F5–F7, F11 and F12 belong to the browser (use-shortcuts.ts). */}
      <button type="button" onClick={() => openDialog({ kind: 'cash' })}>
        Caixa
      </button>
    </nav>
  );
}
