// The counter's commands, each with its key shown on the button (the keys work anywhere on
// the checkout screen; see use-shortcuts.ts). With the till closed no sale can be made: the
// sale's commands are off and none of them is the one to press; the receipts (a cancellation
// after the closing), the manager and "Caixa" stay on.

import type { SaleView } from '../../electron/api/terminal-api.ts';
import { openDialog } from '../state/ui-store.ts';

export function ActionBar(props: { sale: SaleView | null; tillClosed: boolean; onQuantity: () => void }) {
  const { sale, tillClosed, onQuantity } = props;
  const payable = !tillClosed && !!sale && sale.totalCents > 0;
  return (
    <nav className="actions" aria-label="Comandos do caixa">
      <button type="button" className={payable ? 'primary' : undefined} disabled={!payable} onClick={() => openDialog({ kind: 'payment' })}>
        <kbd>F2</kbd> Pagamento
      </button>
      <button type="button" disabled={tillClosed} onClick={onQuantity}>
        <kbd>F3</kbd> Quantidade
      </button>
      <button type="button" disabled={tillClosed} onClick={() => openDialog({ kind: 'consumer' })}>
        <kbd>F4</kbd> Consumidor
      </button>
      <button type="button" disabled={tillClosed || !sale} onClick={() => openDialog({ kind: 'discard' })}>
        <kbd>F8</kbd> Cancelar venda
      </button>
      <button type="button" onClick={() => openDialog({ kind: 'receipts' })}>
        <kbd>F9</kbd> Recibos
      </button>
      <button type="button" onClick={() => openDialog({ kind: 'settings' })}>
        <kbd>F10</kbd> Gerente
      </button>
      {/* No function key: F1, F5–F7, F11 and F12 belong to the browser (use-shortcuts.ts). */}
      <button type="button" onClick={() => openDialog({ kind: 'cash' })}>
        Caixa
      </button>
    </nav>
  );
}
