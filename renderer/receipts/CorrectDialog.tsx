// A rejected receipt (or one the service refused): correct what the authority complained about
// — the payments (card data for rejection 391, say) or the consumer — and send it again with the
// same number and key, on the manager's PIN.

import { useState } from 'react';
import type { ManagerAuthorization, PaymentInput } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { emptyAuthorization, ManagerFields } from '../components/ManagerFields.tsx';
import { checkConsumerDocument, formatDocument } from '../documents/consumer-document.ts';
import type { InputError } from '../money/money.ts';
import { centsToInput, formatCents, parseCents } from '../money/money.ts';
import { CardFields } from '../payment/CardFields.tsx';
import { asksBrand, emptyCard, METHODS, needsCard, paymentFrom, type CardForm, type MethodId } from '../payment/payment-methods.ts';
import { receiptAction } from '../state/receipt-actions.ts';
import { terminal } from '../state/terminal.ts';
import { backToReceipts } from '../state/ui-store.ts';
import { ReceiptHeading } from './ReceiptHeading.tsx';
import { useReceipt } from './use-receipt.ts';
import { BackToReceipts } from './BackToReceipts.tsx';
import { useReceiptSale } from './use-receipt-sale.ts';

type PaymentLine = { tPag: MethodId; amount: string; card: CardForm };

const knownMethod = (tPag: string): MethodId => (METHODS.some((m) => m.tPag === tPag) ? (tPag as MethodId) : '01');

export function CorrectDialog(props: { receiptId: string }) {
  const { receiptId } = props;
  const receipt = useReceipt(receiptId);
  const [payments, setPayments] = useState<PaymentLine[]>([]);
  const [consumer, setConsumer] = useState('');
  const [auth, setAuth] = useState<ManagerAuthorization>(emptyAuthorization);
  const [reason, setReason] = useState('');
  const [error, setError] = useState<TerminalFailure | string | null>(null);
  const [sent, setSent] = useState(false);
  const back = () => backToReceipts(receiptId, 'correct');
  const sale = useReceiptSale(
    receipt?.saleId,
    (s) => {
      setConsumer(s.consumer ? formatDocument(s.consumer.document) : '');
      setPayments(
        s.payments.map((p) => ({
          tPag: knownMethod(p.tPag),
          amount: centsToInput(p.amountCents),
          card: p.card ? { tpIntegra: p.card.tpIntegra, cnpj: p.card.cnpj ?? '', tBand: p.card.tBand ?? '', cAut: p.card.cAut ?? '' } : emptyCard(),
        })),
      );
    },
    setError,
  );

  const update = (i: number, patch: Partial<PaymentLine>) => setPayments(payments.map((p, j) => (j === i ? { ...p, ...patch } : p)));

  const submit = async () => {
    setError(null);
    const out: PaymentInput[] = [];
    for (const [i, line] of payments.entries()) {
      let cents: number;
      try {
        cents = parseCents(line.amount, `Pagamento ${i + 1}, valor`);
      } catch (err) {
        return setError((err as InputError).message);
      }
      const p = paymentFrom(line.tPag, cents, line.card);
      if ('error' in p) return setError(`Pagamento ${i + 1}, ${p.error}`);
      out.push(p.payment);
    }
    let doc: string | null = null;
    if (consumer.trim()) {
      const c = checkConsumerDocument(consumer);
      if (!c.ok) return setError(c.message);
      doc = c.digits;
    }
    try {
      await receiptAction(() => terminal().correctAndResubmit(receiptId, { payments: out, consumer: doc }, { ...auth, reason: reason.trim() }));
      setSent(true);
    } catch (err) {
      setError(asFailure(err));
    }
  };

  return (
    <Dialog title="Corrigir e reenviar NFC-e" onClose={back} wide>
      {receipt && <ReceiptHeading receipt={receipt} />}
      {receipt && (receipt.attention || receipt.motivo) && (
        <p className="warn-text">{receipt.attention ?? `Rejeição ${receipt.codigoStatus ?? ''}: ${receipt.motivo ?? ''}`}</p>
      )}
      {sent ? (
        <>
          <p role="status">Correção enviada; a NFC-e volta para a fila com o mesmo número.</p>
          <BackToReceipts onBack={back} />
        </>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          {sale && <p>Total da venda: {formatCents(sale.totalCents)}</p>}
          {payments.map((p, i) => (
            <fieldset key={i}>
              <legend>Pagamento {i + 1}</legend>
              <div className="row">
                <label className="field">
                  <span>Forma do pagamento {i + 1}</span>
                  <select value={p.tPag} onChange={(e) => update(i, { tPag: e.target.value as MethodId })}>
                    {METHODS.map((m) => (
                      <option key={m.tPag} value={m.tPag}>
                        {m.label}
                      </option>
                    ))}
                  </select>
                </label>
                <label className="field">
                  <span>Valor do pagamento {i + 1}</span>
                  <input inputMode="decimal" value={p.amount} onChange={(e) => update(i, { amount: e.target.value })} />
                </label>
                <button type="button" className="small" onClick={() => setPayments(payments.filter((_, j) => j !== i))}>
                  Remover pagamento {i + 1}
                </button>
              </div>
              {needsCard(p.tPag) && <CardFields value={p.card} onChange={(card) => update(i, { card })} showBrand={asksBrand(p.tPag)} />}
            </fieldset>
          ))}
          <button type="button" className="small" onClick={() => setPayments([...payments, { tPag: '01', amount: '', card: emptyCard() }])}>
            Adicionar pagamento
          </button>
          <label className="field">
            <span>CPF ou CNPJ do consumidor (opcional)</span>
            <input autoCapitalize="characters" spellCheck={false} value={consumer} onChange={(e) => setConsumer(e.target.value)} />
          </label>
          <label className="field">
            <span>Motivo da correção</span>
            <input autoComplete="off" value={reason} onChange={(e) => setReason(e.target.value)} />
          </label>
          <ManagerFields value={auth} onChange={setAuth} />
          <ErrorAlert error={error} />
          <div className="dialog-actions">
            <button type="button" onClick={back}>
              Voltar
            </button>
            <button type="submit" className="primary" disabled={!auth.managerId || !auth.pin || !reason.trim() || payments.length === 0}>
              Corrigir e reenviar
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
