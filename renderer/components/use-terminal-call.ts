// What every form that calls the terminal keeps: whether a call is running (its buttons disabled
// meanwhile) and the failure to show under its fields. The try/catch/finally lives here once.

import { useState } from 'react';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';

/** `Own`: the form's own messages (a field it checked itself), shown in the same place. */
export function useTerminalCall<Own = never>() {
  const [error, setError] = useState<TerminalFailure | Own | null>(null);
  const [busy, setBusy] = useState(false);

  /** Runs `call` with the form busy; its failure is shown, and returned (undefined when it succeeded). */
  const run = async (call: () => Promise<void>): Promise<TerminalFailure | undefined> => {
    setError(null);
    setBusy(true);
    try {
      await call();
      return undefined;
    } catch (err) {
      const failure = asFailure(err);
      setError(failure);
      return failure;
    } finally {
      setBusy(false);
    }
  };

  return { error, setError, busy, run };
}
