// NT 2026.002 (rejection 750): above R$ 10.000,00, or the UF's limit, the NFC-e must name the
// consumer by CPF or CNPJ. The payment dialog shows this where the cashier is about to finish,
// so the customer is asked before the sale can end (the core refuses to finish without it too).

import { useEffect, useRef, useState } from 'react';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { checkConsumerDocument } from '../documents/consumer-document.ts';
import { formatCents } from '../money/money.ts';
import { setConsumer } from '../state/sale-store.ts';

/** `focus`: the payment is complete, so the document is what the cashier types next. */
export function ConsumerRequired(props: { limitCents: number; focus: boolean }) {
  const inputRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (props.focus) inputRef.current?.focus();
  }, [props.focus]);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const check = text.trim() ? checkConsumerDocument(text) : null;

  const save = async () => {
    const c = checkConsumerDocument(text);
    if (!c.ok) {
      setError(c.message);
      return;
    }
    const failure = await setConsumer(c.digits);
    if (failure) setError(failure.message);
  };

  return (
    <form
      className="consumer-required"
      aria-label="Consumidor obrigatório"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <p role="alert">Venda acima de {formatCents(props.limitCents)}: a NFC-e exige o CPF ou o CNPJ do consumidor. Peça o documento antes de finalizar.</p>
      <label className="field">
        <span>CPF ou CNPJ do consumidor</span>
        <input
          ref={inputRef}
          className="big-input"
          inputMode="numeric"
          autoComplete="off"
          value={text}
          aria-invalid={check !== null && !check.ok}
          onChange={(e) => {
            setText(e.target.value);
            setError(null);
          }}
        />
      </label>
      {check?.ok && (
        <p className="hint">
          {check.kind.toUpperCase()} {check.formatted}
        </p>
      )}
      <ErrorAlert error={error} />
      <button type="submit">Informar consumidor</button>
    </form>
  );
}
