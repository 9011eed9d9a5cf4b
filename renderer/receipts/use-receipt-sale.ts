// The sale a receipt was issued for, loaded once for a dialog that works on it (correct and
// resend, return). `onLoaded` seeds the dialog's form from it; a failure goes to `onError`.

import { useEffect, useRef, useState } from 'react';
import type { SaleView } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { terminal } from '../state/terminal.ts';

export function useReceiptSale(saleId: string | undefined, onLoaded: (sale: SaleView) => void, onError: (failure: TerminalFailure) => void): SaleView | null {
  const [sale, setSale] = useState<SaleView | null>(null);
  // The latest callbacks, without reloading the sale each time the dialog renders.
  const callbacks = useRef({ onLoaded, onError });
  useEffect(() => {
    callbacks.current = { onLoaded, onError };
  });
  useEffect(() => {
    if (!saleId) return;
    let open = true;
    terminal()
      .getSale(saleId)
      .then(
        (s) => {
          if (!open) return;
          setSale(s);
          callbacks.current.onLoaded(s);
        },
        (err: unknown) => open && callbacks.current.onError(asFailure(err)),
      );
    return () => {
      open = false;
    };
  }, [saleId]);
  return sale;
}
