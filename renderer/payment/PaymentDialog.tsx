// F2: paying the sale, in one or several lines (part cash, part card...). The core keeps the
// lines and says what is still missing and the change; "Finalizar" is enabled once nothing is.
// Keyboard: type the amount, Enter adds the line; with everything paid, Enter or F2 finishes.

import { useEffect, useId, useRef, useState } from 'react';
import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import type { InputError } from '../money/money.ts';
import { centsToInput, formatCents, parseCents } from '../money/money.ts';
import type { PaymentInput, StaticPixView } from '../../electron/api/terminal-api.ts';
import { PIX_DYNAMIC, PIX_STATIC } from '../../base/common/payment-methods.ts';
import { announce } from '../a11y/announcer.ts';
import {
  addPayment,
  cancelPixCharge,
  closePixCharge,
  createPixCharge,
  finishSale,
  removePayment,
  simulatePixPayment,
  staticPix,
  useSale,
} from '../state/sale-store.ts';
import { closeDialog } from '../state/ui-store.ts';
import { CardFields } from './CardFields.tsx';
import { ConsumerRequired } from './ConsumerRequired.tsx';
import { StaticPixPanel } from './StaticPixPanel.tsx';
import { cancellable, DynamicPixPanel, givenUp } from './DynamicPixPanel.tsx';
import { asksBrand, emptyCard, METHODS, needsCard, paymentFrom, type CardForm, type MethodId } from './payment-methods.ts';

export function PaymentDialog() {
  const sale = useSale((s) => s.sale);
  const busy = useSale((s) => s.busy);
  const remaining = sale?.remainingCents ?? 0;
  const [tPag, setTPag] = useState<MethodId>('01');
  const [amount, setAmount] = useState(remaining > 0 ? centsToInput(remaining) : '');
  const [card, setCard] = useState<CardForm>(emptyCard);
  const [error, setError] = useState<string | null>(null);
  const [pix, setPix] = useState<StaticPixView | null>(null);
  // The charge of this sale only (one left running on a sale discarded since is not shown).
  const pixCharge = useSale((s) => (s.pixCharge && s.pixCharge.saleId === s.sale?.id ? s.pixCharge : null));
  const amountRef = useRef<HTMLInputElement>(null);
  const finishRef = useRef<HTMLButtonElement>(null);
  const confirmPixRef = useRef<HTMLButtonElement>(null);
  const formId = useId();
  const consumerMissing = !!sale && sale.consumerRequired && sale.consumer === null;
  const paid = !!sale && sale.totalCents > 0 && sale.remainingCents === 0 && sale.payments.length > 0;
  const canFinish = paid && !consumerMissing;

  useEffect(() => {
    if (canFinish) finishRef.current?.focus();
  }, [canFinish]);
  useEffect(() => {
    if (pix) confirmPixRef.current?.focus();
  }, [pix]);

  const finish = async () => {
    if (!canFinish || busy) return;
    const r = await finishSale();
    if (r && !(r instanceof Error)) closeDialog();
    else if (r instanceof Error) setError(r.message);
  };

  const add = async () => {
    if (canFinish && amount.trim() === '') return finish();
    let cents: number;
    try {
      cents = parseCents(amount, tPag === '01' ? 'Valor recebido' : 'Valor');
    } catch (err) {
      setError((err as InputError).message);
      return;
    }
    if (tPag === PIX_DYNAMIC) {
      // The charge at the store's PSP: its QR Code, and the sale finishes when the bank says paid.
      const failure = await createPixCharge(cents);
      setError(failure ? failure.message : null);
      return;
    }
    const p = paymentFrom(tPag, cents, card);
    if ('error' in p) {
      setError(p.error);
      return;
    }
    setError(null);
    if (tPag === PIX_STATIC) {
      // First the QR Code for the customer; the line is added when the cashier confirms it.
      const shown = await staticPix(cents);
      if ('brCode' in shown) setPix(shown);
      else setError(shown.message);
      return;
    }
    await addLine(p.payment);
  };

  const addLine = async (payment: PaymentInput): Promise<boolean> => {
    const failure = await addPayment(payment);
    if (failure) {
      setError(failure.message);
      return false;
    }
    const left = useSale.getState().sale?.remainingCents ?? 0;
    setAmount(left > 0 ? centsToInput(left) : '');
    setCard(emptyCard());
    setTPag('01');
    amountRef.current?.select();
    amountRef.current?.scrollIntoView({ block: 'nearest' }); // the lines added above pushed it down
    return true;
  };

  const confirmPix = async (shown: StaticPixView) => {
    if (!(await addLine({ tPag: PIX_STATIC, amountCents: shown.amountCents }))) return;
    setPix(null);
    announce({ text: `Pagamento PIX de ${formatCents(shown.amountCents)} confirmado pelo operador`, politeness: 'polite' });
  };

  const pixAction = async (action: () => Promise<{ message: string } | null>) => {
    const failure = await action();
    setError(failure ? failure.message : null);
  };

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.key === 'F2') {
      e.preventDefault();
      void finish();
    }
  };

  if (!sale) return null;
  const band = (
    <dl className="summary">
      <div>
        <dt>Total</dt>
        <dd className="strong">{formatCents(sale.totalCents)}</dd>
      </div>
      <div>
        <dt>Pago</dt>
        <dd>{formatCents(sale.paidCents)}</dd>
      </div>
      <div>
        <dt>Falta</dt>
        <dd className={sale.remainingCents > 0 ? 'strong due' : 'strong'}>{formatCents(sale.remainingCents)}</dd>
      </div>
      <div>
        <dt>Troco</dt>
        <dd className="strong change">{formatCents(sale.changeCents)}</dd>
      </div>
    </dl>
  );
  return (
    <Dialog title="Pagamento" onClose={closeDialog} wide band={band}>
      <div className="payment" onKeyDown={onKeyDown}>
        {sale.payments.length > 0 && (
          <table className="payments">
            <caption>Pagamentos lançados</caption>
            <tbody>
              {sale.payments.map((p) => (
                <tr key={p.id}>
                  <td>{p.description}</td>
                  <td>{p.card ? (p.card.tpIntegra === '1' ? 'TEF' : 'maquininha') : ''}</td>
                  <td className="num">{formatCents(p.amountCents)}</td>
                  <td>
                    <button
                      type="button"
                      className="small"
                      aria-label={`Remover pagamento ${p.description} ${formatCents(p.amountCents)}`}
                      onClick={() => void removePayment(p.id)}
                    >
                      Remover
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}

        {consumerMissing && <ConsumerRequired limitCents={sale.identificationLimitCents} focus={paid} />}

        {pix && <StaticPixPanel pix={pix} />}
        {pixCharge && <DynamicPixPanel charge={pixCharge} />}

        {!paid && !pix && !pixCharge && (
          <form
            id={formId}
            className="payment-form"
            onSubmit={(e) => {
              e.preventDefault();
              void add();
            }}
          >
            <fieldset>
              <legend>Forma de pagamento</legend>
              <div className="choices big">
                {METHODS.map((m) => (
                  <label key={m.tPag} className={m.tPag === tPag ? 'choice checked' : 'choice'}>
                    <input type="radio" name="tPag" value={m.tPag} checked={m.tPag === tPag} onChange={() => setTPag(m.tPag)} />
                    {m.label}
                  </label>
                ))}
              </div>
            </fieldset>
            <label className="field">
              <span>{tPag === '01' ? 'Valor recebido' : 'Valor'}</span>
              <input
                ref={amountRef}
                autoFocus
                className="big-input"
                inputMode="decimal"
                autoComplete="off"
                value={amount}
                onChange={(e) => setAmount(e.target.value)}
              />
            </label>
            {needsCard(tPag) && tPag !== PIX_DYNAMIC && <CardFields value={card} onChange={setCard} showBrand={asksBrand(tPag)} />}
          </form>
        )}
        <div className="dialog-footer">
          <ErrorAlert error={error} />
          <div className="dialog-actions">
            {!paid && !pix && !pixCharge && (
              <button type="submit" form={formId} aria-keyshortcuts="Enter" disabled={busy}>
                {tPag === PIX_STATIC || tPag === PIX_DYNAMIC ? 'Mostrar QR Code PIX' : 'Adicionar pagamento'} <kbd>Enter</kbd>
              </button>
            )}
            {pixCharge ? (
              <>
                {givenUp(pixCharge) && (
                  <button type="button" onClick={closePixCharge}>
                    Voltar
                  </button>
                )}
                {cancellable(pixCharge) && (
                  <button type="button" onClick={() => void pixAction(cancelPixCharge)} disabled={busy}>
                    Cancelar cobrança
                  </button>
                )}
                {pixCharge.simulated && pixCharge.state === 'active' && (
                  <button type="button" className="primary" onClick={() => void pixAction(simulatePixPayment)} disabled={busy}>
                    Simular pagamento
                  </button>
                )}
              </>
            ) : pix ? (
              // In the footer, where the dialog keeps its actions in view at any zoom.
              <>
                <button type="button" onClick={() => setPix(null)} disabled={busy}>
                  Voltar
                </button>
                <button ref={confirmPixRef} type="button" className="primary" onClick={() => void confirmPix(pix)} disabled={busy}>
                  Confirmar recebimento do PIX
                </button>
              </>
            ) : (
              <button ref={finishRef} type="button" className="primary" aria-keyshortcuts="F2" disabled={!canFinish || busy} onClick={() => void finish()}>
                Finalizar venda <kbd>F2</kbd>
              </button>
            )}
          </div>
        </div>
      </div>
    </Dialog>
  );
}
