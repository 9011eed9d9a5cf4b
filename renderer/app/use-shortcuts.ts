// The function keys of the checkout screen. F1, F5, F6, F7, F11 and F12 are left alone: the
// browser (help, reload, address bar, caret browsing, full screen, developer tools) owns them.
// With the till closed the sale's keys (F2, F3, F4, F8) do nothing, as their buttons show.

import { useEffect } from 'react';
import { tillKnownClosed, useCash } from '../state/cash-store.ts';
import { useSale } from '../state/sale-store.ts';
import { openDialog, useUi } from '../state/ui-store.ts';

export function useShortcuts(focusQuantity: () => void): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (useUi.getState().dialog.kind !== 'none') return;
      const { sale } = useSale.getState();
      const selling = !tillKnownClosed(useCash.getState());
      const act = (f: () => void) => {
        e.preventDefault();
        if (selling) f();
      };
      switch (e.key) {
        case 'F2':
          if (sale && sale.totalCents > 0) act(() => openDialog({ kind: 'payment' }));
          else e.preventDefault();
          break;
        case 'F3':
          act(focusQuantity);
          break;
        case 'F4':
          act(() => openDialog({ kind: 'consumer' }));
          break;
        case 'F8':
          if (sale) act(() => openDialog({ kind: 'discard' }));
          break;
        case 'F9':
          e.preventDefault();
          openDialog({ kind: 'receipts' });
          break;
        case 'F10':
          e.preventDefault();
          openDialog({ kind: 'settings' });
          break;
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [focusQuantity]);
}
