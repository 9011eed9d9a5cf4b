// The consumer's CPF or CNPJ as the cashier types it, for the F4 dialog and for the payment
// dialog when the law requires the consumer: checked on every key, shown formatted with its kind
// once valid, and set on the sale by the core, whose refusal appears under the field.

import { useEffect, useRef, useState } from 'react';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { checkConsumerDocument } from '../documents/consumer-document.ts';
import { setConsumer } from '../state/sale-store.ts';

export type ConsumerDocumentEntry = ReturnType<typeof useConsumerDocument>;

/** The typed text, its check and the last error; `save` sets it on the sale and calls `onSaved` once the core accepts it. */
export function useConsumerDocument(initialText: string, onSaved?: () => void) {
  const [text, setText] = useState(initialText);
  const [error, setError] = useState<string | null>(null);
  const check = text.trim() ? checkConsumerDocument(text) : null;

  const type = (value: string) => {
    setText(value);
    setError(null);
  };

  const save = async () => {
    const c = checkConsumerDocument(text);
    if (!c.ok) {
      setError(c.message);
      return;
    }
    const failure = await setConsumer(c.digits);
    if (failure) setError(failure.message);
    else onSaved?.();
  };

  return { text, type, check, error, setError, save };
}

/** `focus`: move the cursor here when it turns true (the payment dialog, once the payment is complete). */
export function ConsumerDocumentField(props: { entry: ConsumerDocumentEntry; focus?: boolean }) {
  const { text, type, check, error } = props.entry;
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (props.focus) input.current?.focus();
  }, [props.focus]);
  return (
    <>
      <label className="field">
        <span>CPF ou CNPJ do consumidor</span>
        <input
          ref={input}
          className="big-input"
          autoCapitalize="characters"
          spellCheck={false}
          autoComplete="off"
          value={text}
          aria-invalid={check !== null && !check.ok}
          onChange={(e) => type(e.target.value)}
        />
      </label>
      {check?.ok && (
        <p className="hint">
          {check.kind.toUpperCase()} {check.formatted}
        </p>
      )}
      <ErrorAlert error={error} />
    </>
  );
}
