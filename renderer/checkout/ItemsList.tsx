// The sale's lines, newest at the bottom. Removed lines stay, struck through, as on the receipt
// tape; the selected line (arrows in the product input) is the one Delete removes.

import { useEffect, useRef } from 'react';
import type { SaleView } from '../../electron/api/terminal-api.ts';
import { formatCents, formatQuantity } from '../money/money.ts';
import { removeItem, selectItem } from '../state/sale-store.ts';

export function ItemsList(props: { sale: SaleView | null; selectedItemId: number | null }) {
  const { sale, selectedItemId } = props;
  const bottom = useRef<HTMLDivElement>(null);
  const count = sale?.items.length ?? 0;
  useEffect(() => {
    bottom.current?.scrollIntoView?.({ block: 'end' });
  }, [count]);
  // The line the arrows select comes into view (the list may be longer than the window).
  // So does it when the window changes size (zoom), where the page scrolls instead of the list.
  const table = useRef<HTMLTableElement>(null);
  useEffect(() => {
    const show = () => table.current?.querySelector('tr[aria-current]')?.scrollIntoView?.({ block: 'nearest' });
    show();
    window.addEventListener('resize', show);
    return () => window.removeEventListener('resize', show);
  }, [selectedItemId]);

  if (!sale || sale.items.length === 0) {
    return (
      <div className="items empty">
        <p>Passe o código de barras ou digite o nome do produto.</p>
      </div>
    );
  }
  return (
    <div className="items">
      <table ref={table}>
        <caption className="sr-only">Itens da venda</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Produto</th>
            <th scope="col" className="num">
              Qtd
            </th>
            <th scope="col" className="num">
              Unitário
            </th>
            <th scope="col" className="num">
              Total
            </th>
            <th scope="col">
              <span className="sr-only">Ações</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {sale.items.map((item, i) => (
            <tr
              key={item.id}
              className={[item.removed ? 'removed' : '', item.id === selectedItemId ? 'selected' : ''].join(' ')}
              aria-current={item.id === selectedItemId ? 'true' : undefined}
              onClick={() => !item.removed && selectItem(item.id)}
            >
              <td>{i + 1}</td>
              <td>
                {item.description}
                {item.removed && <span className="tag">removido</span>}
              </td>
              <td className="num">
                {formatQuantity(item.quantity)} {item.unit}
              </td>
              <td className="num">{formatCents(item.unitPriceCents)}</td>
              <td className="num">{formatCents(item.totalCents)}</td>
              <td>
                {!item.removed && (
                  <button type="button" className="small" aria-label={`Remover ${item.description}`} onClick={() => void removeItem(item.id)}>
                    Remover
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div ref={bottom} />
    </div>
  );
}
