// The live regions announce() writes to. While a modal dialog is open they live inside it: a
// browser may hide everything outside an aria-modal dialog from screen readers, live regions
// included, and the payment's Falta and Troco are said while the payment dialog is open.

import { createPortal } from 'react-dom';
import { useAnnouncer } from './announcer.ts';
import { useDialogBox } from './dialog-box.ts';

export function Announcer() {
  const polite = useAnnouncer((s) => s.polite);
  const assertive = useAnnouncer((s) => s.assertive);
  const dialog = useDialogBox((s) => s.box);
  const regions = (
    <div className="sr-only">
      <div role="log" aria-live="polite" aria-label="Avisos da venda">
        {polite.map((e) => (
          <p key={e.id}>{e.text}</p>
        ))}
      </div>
      <div role="log" aria-live="assertive" aria-label="Avisos urgentes">
        {assertive.map((e) => (
          <p key={e.id}>{e.text}</p>
        ))}
      </div>
    </div>
  );
  return dialog ? createPortal(regions, dialog) : regions;
}
