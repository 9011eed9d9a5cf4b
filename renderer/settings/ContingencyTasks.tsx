// What the offline contingency left for a person: in-doubt sales still to be reconciled and
// contingency receipts the service did not accept, each with what is left to do. One that
// stalled on a refusal by the service can be sent on again once its cause is fixed (the token,
// the service address); the manager's authorization is the settings dialog's.

import { useState } from 'react';
import type { ContingencyStatus, ManagerAuthorization } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { contingencyAction } from '../state/status-store.ts';
import { terminal } from '../state/terminal.ts';

export function ContingencyTasks({ status, auth }: { status: ContingencyStatus | null; auth: ManagerAuthorization }) {
  const [error, setError] = useState<TerminalFailure | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const tasks = status?.openTasks ?? [];

  const resume = async (taskId: string) => {
    setError(null);
    setBusy(taskId);
    try {
      await contingencyAction(() => terminal().resumeContingencyTask(taskId, auth));
    } catch (err) {
      setError(asFailure(err));
    } finally {
      setBusy(null);
    }
  };

  return (
    <section className="contingency-tasks" aria-labelledby="contingency-tasks-title">
      <h4 id="contingency-tasks-title">Pendências da contingência</h4>
      {tasks.length === 0 ? (
        <p className="muted">Nenhuma pendência.</p>
      ) : (
        <ul>
          {tasks.map((t) => (
            <li key={t.id}>
              <span>{t.description}</span>
              {t.canResume && (
                <button type="button" className="small" disabled={busy !== null} aria-label={`Reenviar: ${t.description}`} onClick={() => void resume(t.id)}>
                  Reenviar
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <ErrorAlert error={error} />
    </section>
  );
}
