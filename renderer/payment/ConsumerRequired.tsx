// NT 2026.002 (rejection 750): above R$ 10.000,00, or the UF's limit, the NFC-e must name the
// consumer by CPF or CNPJ. The payment dialog shows this where the cashier is about to finish,
// so the customer is asked before the sale can end (the core refuses to finish without it too).

import { ConsumerDocumentField, useConsumerDocument } from '../checkout/ConsumerDocumentField.tsx';
import { formatCents } from '../money/money.ts';

/** `focus`: the payment is complete, so the document is what the cashier types next. */
export function ConsumerRequired(props: { limitCents: number; focus: boolean }) {
  const entry = useConsumerDocument('');

  return (
    <form
      className="consumer-required"
      aria-label="Consumidor obrigatório"
      onSubmit={(e) => {
        e.preventDefault();
        void entry.save();
      }}
    >
      <p role="alert">Venda acima de {formatCents(props.limitCents)}: a NFC-e exige o CPF ou o CNPJ do consumidor. Peça o documento antes de finalizar.</p>
      <ConsumerDocumentField entry={entry} focus={props.focus} />
      <button type="submit">Informar consumidor</button>
    </form>
  );
}
