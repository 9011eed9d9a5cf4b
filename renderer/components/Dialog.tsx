// A modal dialog: aria-modal, labelled by its title, focus moved inside on open and given back
// on close, Tab kept inside, Escape closes. One dialog at a time (state/ui-store.ts), so Escape
// is heard on the whole page: focus may have dropped to the page when a button it sat on was
// disabled or replaced, and Escape must still close.

import { useEffect, useId, useRef, type ReactNode } from 'react';

const FOCUSABLE = 'input:not([disabled]), select:not([disabled]), textarea:not([disabled]), button:not([disabled]), [tabindex]:not([tabindex="-1"])';

function focusables(box: HTMLElement): HTMLElement[] {
  return Array.from(box.querySelectorAll<HTMLElement>(FOCUSABLE));
}

export function Dialog(props: { title: string; onClose: () => void; children: ReactNode; wide?: boolean }) {
  const { title, onClose, children, wide } = props;
  const titleId = useId();
  const ref = useRef<HTMLDivElement>(null);
  const closeRef = useRef(onClose);
  useEffect(() => {
    closeRef.current = onClose;
  }, [onClose]);

  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const box = ref.current;
    // The first field (or button) takes the focus unless a child took it (autoFocus).
    if (box && !box.contains(document.activeElement)) focusables(box)[0]?.focus();

    const onKey = (e: KeyboardEvent) => {
      const inside = ref.current;
      if (!inside) return;
      if (e.key === 'Escape') {
        e.preventDefault();
        closeRef.current();
        return;
      }
      if (e.key !== 'Tab') return;
      const items = focusables(inside);
      if (!items.length) return;
      const first = items[0]!;
      const last = items.at(-1)!;
      const active = document.activeElement;
      if (!inside.contains(active)) {
        e.preventDefault();
        (e.shiftKey ? last : first).focus();
      } else if (e.shiftKey && active === first) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && active === last) {
        e.preventDefault();
        first.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
      if (before?.isConnected) before.focus();
    };
  }, []);

  return (
    <div className="backdrop">
      <div ref={ref} className={wide ? 'dialog dialog-wide' : 'dialog'} role="dialog" aria-modal="true" aria-labelledby={titleId}>
        <header className="dialog-header">
          <h2 id={titleId}>{title}</h2>
          <button type="button" className="ghost" onClick={onClose}>
            Fechar <kbd>Esc</kbd>
          </button>
        </header>
        <div className="dialog-body">{children}</div>
      </div>
    </div>
  );
}
