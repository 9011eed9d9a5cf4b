// After the cancellation window: the goods come back through an NF-e de devolução that
// references the receipt. The manager picks the items and quantities, gives the reason and, when
// the receipt named no consumer, who is returning the goods.

import { useState } from 'react';
import type { ManagerAuthorization } from '../../electron/api/terminal-api.ts';
import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { useTerminalCall } from '../components/use-terminal-call.ts';
import { JustificationField, justificationOk } from '../components/JustificationField.tsx';
import { emptyAuthorization, ManagerFields } from '../components/ManagerFields.tsx';
import { checkConsumerDocument } from '../documents/consumer-document.ts';
import type { InputError } from '../money/money.ts';
import { formatCents, formatQuantity, parseQuantity } from '../money/money.ts';
import { StateBadge } from '../receipt/StateBadge.tsx';
import { requestReturn, useReceipts } from '../state/receipts-store.ts';
import { terminal } from '../state/terminal.ts';
import { backToReceipts } from '../state/ui-store.ts';
import { ReceiptHeading } from './ReceiptHeading.tsx';
import { useReceipt } from './use-receipt.ts';
import { BackToReceipts } from './BackToReceipts.tsx';
import { useReceiptSale } from './use-receipt-sale.ts';

type Line = { itemId: number; description: string; sold: string; include: boolean; quantity: string };

export function ReturnDialog(props: { receiptId: string }) {
  const { receiptId } = props;
  const receipt = useReceipt(receiptId);
  const [lines, setLines] = useState<Line[]>([]);
  const [reason, setReason] = useState('');
  const [document, setDocument] = useState('');
  const [name, setName] = useState('');
  const [auth, setAuth] = useState<ManagerAuthorization>(emptyAuthorization);
  const { error, setError, busy, run } = useTerminalCall<string>();
  const [created, setCreated] = useState<string | null>(null);
  const live = useReceipts((s) => s.returns.find((r) => r.id === created));
  const back = () => backToReceipts(receiptId, 'return');
  const sale = useReceiptSale(
    receipt?.saleId,
    (s) =>
      setLines(
        s.items
          .filter((i) => !i.removed)
          .map((i) => ({ itemId: i.id, description: i.description, sold: i.quantity, include: true, quantity: formatQuantity(i.quantity) })),
      ),
    setError,
  );

  const needsConsumer = sale !== null && sale.consumer === null;

  const submit = async () => {
    setError(null);
    const chosen = lines.filter((l) => l.include);
    if (!chosen.length) return setError('Itens: escolha ao menos um item para devolver');
    let items: { itemId: number; quantity: string }[];
    try {
      items = chosen.map((l) => ({ itemId: l.itemId, quantity: parseQuantity(l.quantity, `Quantidade de ${l.description}`) }));
    } catch (err) {
      return setError((err as InputError).message);
    }
    let consumer: { document: string; name: string } | undefined;
    if (needsConsumer) {
      const c = checkConsumerDocument(document);
      if (!c.ok) return setError(c.message.replace('CPF/CNPJ do consumidor', 'CPF/CNPJ de quem devolve'));
      if (!name.trim()) return setError('Nome de quem devolve: obrigatório');
      consumer = { document: c.digits, name: name.trim() };
    }
    await run(async () => {
      const r = await requestReturn(() => terminal().returnReceipt(receiptId, { ...auth, items, reason: reason.trim(), ...(consumer && { consumer }) }));
      setCreated(r.id);
    });
  };

  return (
    <Dialog title="Devolução" onClose={back} wide>
      {receipt && <ReceiptHeading receipt={receipt} />}
      {created && live ? (
        <>
          <p role="status">
            NF-e de devolução {live.nNF !== null ? `nº ${live.nNF}` : ''} ({formatCents(live.totalCents)}): <StateBadge kind="return" state={live.state} />
          </p>
          {live.attention && <ErrorAlert error={live.attention} />}
          <BackToReceipts onBack={back} />
        </>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <fieldset>
            <legend>Itens devolvidos</legend>
            {lines.map((l, i) => (
              <div className="row return-line" key={l.itemId}>
                <label className="choice">
                  <input
                    type="checkbox"
                    checked={l.include}
                    onChange={(e) => setLines(lines.map((x, j) => (j === i ? { ...x, include: e.target.checked } : x)))}
                  />
                  {l.description} (vendido: {formatQuantity(l.sold)})
                </label>
                <label className="field">
                  <span>Quantidade devolvida de {l.description}</span>
                  <input
                    inputMode="decimal"
                    disabled={!l.include}
                    value={l.quantity}
                    onChange={(e) => setLines(lines.map((x, j) => (j === i ? { ...x, quantity: e.target.value } : x)))}
                  />
                </label>
              </div>
            ))}
          </fieldset>
          <JustificationField label="Motivo da devolução" value={reason} onChange={setReason} />
          {needsConsumer && (
            <fieldset>
              <legend>Quem devolve (a NFC-e não identificou o consumidor)</legend>
              <div className="row">
                <label className="field">
                  <span>CPF/CNPJ de quem devolve</span>
                  <input autoCapitalize="characters" spellCheck={false} autoComplete="off" value={document} onChange={(e) => setDocument(e.target.value)} />
                </label>
                <label className="field grow">
                  <span>Nome de quem devolve</span>
                  <input autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} />
                </label>
              </div>
            </fieldset>
          )}
          <ManagerFields value={auth} onChange={setAuth} />
          <ErrorAlert error={error} />
          <div className="dialog-actions">
            <button type="button" onClick={back}>
              Voltar
            </button>
            <button type="submit" className="primary" disabled={busy || !auth.managerId || !auth.pin || !justificationOk(reason)}>
              Emitir devolução
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
