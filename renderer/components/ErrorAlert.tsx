// An error the cashier must read: announced by screen readers (role="alert"), with the field it
// is about when the core named one.

import type { TerminalFailure } from '../api/terminal-failure.ts';

export function ErrorAlert(props: { error: TerminalFailure | string | null; onDismiss?: () => void }) {
  const { error, onDismiss } = props;
  if (!error) return null;
  const message = typeof error === 'string' ? error : error.message;
  return (
    <div role="alert" className="alert">
      <span>{message}</span>
      {onDismiss && (
        <button type="button" className="ghost small" onClick={onDismiss}>
          OK
        </button>
      )}
    </div>
  );
}
