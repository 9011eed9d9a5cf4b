// The manager's authorization inside a dialog: who (from the core's list) and the PIN. The core
// checks the PIN with the action itself, so a wrong one comes back as that action's error.

import { useEffect, useId } from 'react';
import type { ManagerAuthorization } from '../../electron/api/terminal-api.ts';
import { loadManagers, useSettings } from '../state/settings-store.ts';
import { ErrorAlert } from './ErrorAlert.tsx';

/**
 * `focusPin`: the PIN is where the dialog starts (the manager is chosen already when there is one):
 * for dialogs whose first fields these are.
 */
export function ManagerFields(props: { value: ManagerAuthorization; onChange: (v: ManagerAuthorization) => void; focusPin?: boolean }) {
  const { value, onChange, focusPin } = props;
  const managers = useSettings((s) => s.managers);
  const error = useSettings((s) => s.managersError);
  const selectId = useId();
  useEffect(() => {
    void loadManagers();
  }, []);
  useEffect(() => {
    if (!value.managerId && managers.length) onChange({ ...value, managerId: managers[0]!.id });
  }, [managers, value, onChange]);

  return (
    <fieldset className="manager">
      <legend>Autorização do gerente</legend>
      <ErrorAlert error={error} />
      <div className="row">
        <div className="field">
          {/* Not wrapped: a wrapping label would fold the chosen option into the select's name. */}
          <label htmlFor={selectId}>Gerente</label>
          <select id={selectId} value={value.managerId} onChange={(e) => onChange({ ...value, managerId: e.target.value })}>
            {managers.length === 0 && <option value="">Nenhum gerente cadastrado</option>}
            {managers.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name}
              </option>
            ))}
          </select>
        </div>
        <label className="field">
          <span>PIN do gerente</span>
          <input
            type="password"
            inputMode="numeric"
            autoComplete="off"
            data-autofocus={focusPin || undefined}
            value={value.pin}
            onChange={(e) => onChange({ ...value, pin: e.target.value })}
          />
        </label>
      </div>
    </fieldset>
  );
}

export const emptyAuthorization = (): ManagerAuthorization => ({ managerId: '', pin: '' });
