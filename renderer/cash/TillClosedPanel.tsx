// In place of the counter while the till is closed: no sale finishes without an open session,
// so the cashier opens it here, with the float counted in the drawer.

import { useEffect, useRef, useState } from 'react';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { openCash } from '../state/cash-store.ts';
import { useUi } from '../state/ui-store.ts';
import { parseCentsOrZero } from './money-input.ts';

export function TillClosedPanel() {
  const [operator, setOperator] = useState('');
  const [float, setFloat] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const operatorRef = useRef<HTMLInputElement>(null);
  // The cashier starts here, unless a dialog is open (the till just closed in the Caixa dialog,
  // whose closing the cashier is reading): the focus is not pulled from behind it.
  useEffect(() => {
    if (useUi.getState().dialog.kind === 'none') operatorRef.current?.focus();
  }, []);

  const submit = async () => {
    let floatCents: number;
    try {
      floatCents = parseCentsOrZero(float, 'Troco inicial');
    } catch (err) {
      setError((err as Error).message);
      return;
    }
    setBusy(true);
    const failure = await openCash({ floatCents, operator });
    setBusy(false);
    setError(failure?.message ?? null);
  };

  return (
    <section className="till-closed" aria-labelledby="till-closed-title">
      <h2 id="till-closed-title">Caixa fechado</h2>
      <p className="muted">Para vender, abra o caixa informando o troco inicial que está na gaveta.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <label className="field">
          <span>Operador(a)</span>
          <input ref={operatorRef} autoComplete="off" value={operator} onChange={(e) => setOperator(e.target.value)} />
        </label>
        <label className="field">
          <span>Troco inicial</span>
          <input className="big-input" inputMode="decimal" autoComplete="off" placeholder="0,00" value={float} onChange={(e) => setFloat(e.target.value)} />
        </label>
        <ErrorAlert error={error} />
        <div className="dialog-actions">
          <button type="submit" className="primary" disabled={busy}>
            Abrir caixa
          </button>
        </div>
      </form>
    </section>
  );
}
