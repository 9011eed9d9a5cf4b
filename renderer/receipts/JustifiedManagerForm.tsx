// A manager action on a receipt that takes a PIN and a 15–255 character justification and
// nothing else (cancellation, voiding a number): the fields, the terminal's refusal, and the
// confirm button, enabled only once everything is filled in.

import { useState, type ReactNode } from 'react';
import type { ManagerAuthorization } from '../../electron/api/terminal-api.ts';
import type { TerminalFailure } from '../api/terminal-failure.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { useTerminalCall } from '../components/use-terminal-call.ts';
import { JustificationField, justificationOk } from '../components/JustificationField.tsx';
import { emptyAuthorization, ManagerFields } from '../components/ManagerFields.tsx';

export type JustifiedAuthorization = ManagerAuthorization & { justification: string };

export function JustifiedManagerForm(props: {
  /** What the action does, above the fields. */
  intro?: ReactNode;
  justificationLabel: string;
  confirmLabel: string;
  onBack: () => void;
  /** Performs the action; a rejection is shown under the fields (and passed to onFailure). */
  onConfirm: (input: JustifiedAuthorization) => Promise<void>;
  onFailure?: (failure: TerminalFailure) => void;
}) {
  const { intro, justificationLabel, confirmLabel, onBack, onConfirm, onFailure } = props;
  const [auth, setAuth] = useState<ManagerAuthorization>(emptyAuthorization);
  const [justification, setJustification] = useState('');
  const { error, busy, run } = useTerminalCall();

  const submit = async () => {
    const failure = await run(() => onConfirm({ ...auth, justification: justification.trim() }));
    if (failure) onFailure?.(failure);
  };

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      {intro}
      <ManagerFields value={auth} onChange={setAuth} focusPin />
      <JustificationField label={justificationLabel} value={justification} onChange={setJustification} />
      <ErrorAlert error={error} />
      <div className="dialog-actions">
        <button type="button" onClick={onBack}>
          Voltar
        </button>
        <button type="submit" className="danger" disabled={busy || !auth.managerId || !auth.pin || !justificationOk(justification)}>
          {confirmLabel}
        </button>
      </div>
    </form>
  );
}
