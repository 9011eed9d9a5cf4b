// A modal dialog: aria-modal, labelled by its title; Tab and the focus kept inside; Escape closes.
//
// Focus (WAI-ARIA dialog pattern): on opening, and whenever what held it disappears (a step of
// the dialog replaced by the next), the focus goes to the dialog's first field or main action
// (initialFocus below), never to "Fechar" in the header, where Enter would close it. When the
// last dialog closes, it goes back to what opened the first (state/ui-store.ts). Focus taken
// from outside while the dialog is open (a field behind it mounting with autoFocus) is brought
// back. One dialog at a time, so Escape is heard on the whole page: focus may have dropped to
// the page when a button it sat on was disabled, and Escape must still close.

import { useEffect, useId, useRef, type ReactNode } from 'react';
import { useDialogBox } from '../a11y/dialog-box.ts';
import { returnFocusToOpener, useUi } from '../state/ui-store.ts';

const FOCUSABLE = 'input:not([disabled]), select:not([disabled]), textarea:not([disabled]), button:not([disabled]), summary, [tabindex]:not([tabindex="-1"])';
const FIELD = 'input:not([disabled]):not([type="hidden"]):not([tabindex="-1"]), select:not([disabled]), textarea:not([disabled])';

function focusables(box: HTMLElement): HTMLElement[] {
  return Array.from(box.querySelectorAll<HTMLElement>(FOCUSABLE)).filter((el) => el.tabIndex >= 0);
}

/**
 * Where the focus goes in a dialog: what the dialog marked (data-autofocus: the PIN once the
 * manager is chosen, the row a list was left by), else its first field, else its main action
 * (button.primary), else its first control; "Fechar" only when it has nothing else.
 */
export function initialFocus(body: HTMLElement): HTMLElement | null {
  return (
    body.querySelector<HTMLElement>('[data-autofocus]:not([disabled])') ??
    body.querySelector<HTMLElement>(FIELD) ??
    body.querySelector<HTMLElement>('button.primary:not([disabled])') ??
    focusables(body)[0] ??
    null
  );
}

/** `band`: what stays in view above the scrolling body however small the screen (the payment's Falta and Troco). */
export function Dialog(props: { title: string; onClose: () => void; children: ReactNode; wide?: boolean; band?: ReactNode }) {
  const { title, onClose, children, wide, band } = props;
  const titleId = useId();
  const ref = useRef<HTMLDivElement>(null);
  const bodyRef = useRef<HTMLDivElement>(null);
  const closeRef = useRef<HTMLButtonElement>(null);
  const onCloseRef = useRef(onClose);
  useEffect(() => {
    onCloseRef.current = onClose;
  }, [onClose]);

  useEffect(() => {
    const box = ref.current!;
    const body = bodyRef.current!;
    useDialogBox.setState({ box });
    const settle = () => (initialFocus(body) ?? closeRef.current)?.focus();
    // A child may have taken the focus already (autoFocus on the field the cashier types first).
    if (!box.contains(document.activeElement)) settle();

    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        onCloseRef.current();
        return;
      }
      if (e.key !== 'Tab') return;
      const items = focusables(box);
      if (!items.length) return;
      const first = items[0]!;
      const last = items.at(-1)!;
      const active = document.activeElement;
      if (!box.contains(active)) {
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
    // Focus moved behind the dialog by someone else: back inside.
    const onFocusIn = (e: FocusEvent) => {
      if (e.target instanceof Node && !box.contains(e.target)) settle();
    };
    // The focused element removed (one step of the dialog gave way to the next): the new step's start.
    const lost = new MutationObserver(() => {
      const active = document.activeElement;
      if (active === null || active === document.body) settle();
    });
    lost.observe(box, { childList: true, subtree: true });
    // The window resized (zoom): the field being typed in stays in view in the dialog's scroll.
    const onResize = () => (box.contains(document.activeElement) ? document.activeElement?.scrollIntoView({ block: 'nearest' }) : undefined);
    window.addEventListener('resize', onResize);
    window.addEventListener('keydown', onKey);
    document.addEventListener('focusin', onFocusIn);
    return () => {
      lost.disconnect();
      window.removeEventListener('resize', onResize);
      window.removeEventListener('keydown', onKey);
      document.removeEventListener('focusin', onFocusIn);
      if (useDialogBox.getState().box === box) useDialogBox.setState({ box: null });
      // Replaced by another dialog: that one takes the focus. Closed: back to the opener.
      if (useUi.getState().dialog.kind === 'none') returnFocusToOpener();
    };
  }, []);

  return (
    <div className="backdrop">
      <div ref={ref} className={wide ? 'dialog dialog-wide' : 'dialog'} role="dialog" aria-modal="true" aria-labelledby={titleId}>
        <header className="dialog-header">
          <h2 id={titleId}>{title}</h2>
          <button ref={closeRef} type="button" className="ghost" onClick={onClose}>
            Fechar <kbd>Esc</kbd>
          </button>
        </header>
        {band && <div className="dialog-band">{band}</div>}
        <div ref={bodyRef} className="dialog-body">
          {children}
        </div>
      </div>
    </div>
  );
}
