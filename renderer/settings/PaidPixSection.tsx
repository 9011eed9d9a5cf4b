// Gerente › PIX pagos sem venda (docs/pix.md, "Paid without a sale"): a PIX the store's PSP
// received that no sale took — paid after the cashier gave up on the charge, or that its sale
// could not take. The manager either finishes the sale with it ("Concluir venda": the PIX is its
// payment, its NFC-e issued once) or gives it back ("Devolver", at the PSP). Both are checked
// with the PIN and audited by the core. Refunds stay listed with their state for a day.

import { useCallback, useEffect, useState } from 'react';
import type { ManagerAuthorization, PaidPixWithoutSale } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { formatCents } from '../money/money.ts';
import { STATE_WORDS } from '../payment/DynamicPixPanel.tsx';
import { formatDateTime } from '../receipt/receipt-labels.ts';
import { terminal } from '../state/terminal.ts';

const SALE_WORDS: Record<PaidPixWithoutSale['sale']['state'], string> = { open: 'aberta', finished: 'concluída', discarded: 'cancelada' };

const REFUND_WORDS: Record<NonNullable<PaidPixWithoutSale['refundState']>, string> = {
  EM_PROCESSAMENTO: 'em processamento no banco',
  DEVOLVIDO: 'devolvido ao pagador',
  NAO_REALIZADO: 'o banco não realizou a devolução',
};

export function PaidPixSection({ auth }: { auth: ManagerAuthorization }) {
  const [list, setList] = useState<PaidPixWithoutSale[] | null>(null);
  const [error, setError] = useState<TerminalFailure | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const load = useCallback(() => {
    terminal()
      .paidPixWithoutSale()
      .then(setList, (err: unknown) => setError(asFailure(err)));
  }, []);
  useEffect(() => {
    load();
    // Each change of a charge (a refund confirmed, a sale finished) shows here as it happens.
    return terminal().subscribe((e) => {
      if (e.type === 'pix') load();
    });
  }, [load]);

  const act = async (c: PaidPixWithoutSale, action: 'finish' | 'refund') => {
    setBusy(c.txid);
    setError(null);
    setDone(null);
    try {
      if (action === 'finish') await terminal().finishSaleWithPix(c.txid, auth);
      else await terminal().refundPix(c.txid, auth);
      setDone(
        action === 'finish'
          ? `Venda concluída com o PIX de ${formatCents(c.paidCents ?? 0)}: a NFC-e é emitida e impressa.`
          : `Devolução de ${formatCents(c.paidCents ?? 0)} pedida ao banco.`,
      );
    } catch (err) {
      setError(asFailure(err));
    } finally {
      setBusy(null);
      load();
    }
  };

  if (!list) return error ? <ErrorAlert error={`Não foi possível carregar os PIX: ${error.message}`} /> : <p className="muted">Carregando…</p>;
  return (
    <section aria-labelledby="paid-pix-title">
      <h3 id="paid-pix-title">Cobranças PIX pagas sem venda</h3>
      <p className="muted">
        PIX que o banco recebeu depois que o caixa desistiu da cobrança (ou que a venda não pôde aceitar). Conclua a venda com ele ou devolva-o ao pagador.
      </p>
      <ErrorAlert error={error} />
      {done && <p role="status">{done}</p>}
      {list.length === 0 ? (
        <p>Nenhuma cobrança PIX paga sem venda.</p>
      ) : (
        <table className="rejections">
          <caption>Cobranças PIX pagas sem venda</caption>
          <thead>
            <tr>
              <th scope="col">Valor</th>
              <th scope="col">Pago em</th>
              <th scope="col">Identificador (txid)</th>
              <th scope="col">endToEndId</th>
              <th scope="col">Venda</th>
              <th scope="col">Situação</th>
              <th scope="col">Ações</th>
            </tr>
          </thead>
          <tbody>
            {list.map((c) => (
              <tr key={c.txid}>
                <td>{formatCents(c.paidCents ?? c.amountCents)}</td>
                <td>{c.paidAt ? formatDateTime(c.paidAt) : '—'}</td>
                <td>
                  <code>{c.txid}</code>
                </td>
                <td>
                  <code>{c.e2eid}</code>
                </td>
                <td>
                  {c.sale.id.slice(0, 8)} · {SALE_WORDS[c.sale.state]} · {formatCents(c.sale.totalCents)}
                  {c.sale.state === 'open' && c.sale.remainingCents > 0 && ` (falta ${formatCents(c.sale.remainingCents)})`}
                </td>
                <td>
                  {c.state === 'paid_late' ? 'aguardando o gerente' : STATE_WORDS[c.state]}
                  {c.refundState && ` — ${REFUND_WORDS[c.refundState]}`}
                  {c.lastError && <div className="muted">{c.lastError}</div>}
                  {c.secondPayments.map((p) => (
                    <div key={p.e2eid}>
                      Pago duas vezes: o segundo PIX (<code>{p.e2eid}</code>, {formatCents(p.paidCents)}) é devolvido automaticamente —{' '}
                      {p.refundState ? REFUND_WORDS[p.refundState] : 'devolução a pedir'}
                      {p.lastError && ` (${p.lastError})`}
                    </div>
                  ))}
                </td>
                <td>
                  {c.state === 'paid_late' && (
                    <>
                      <button
                        type="button"
                        className="primary"
                        disabled={busy !== null || c.sale.state !== 'open'}
                        title={c.sale.state !== 'open' ? 'A venda não está mais aberta: devolva o PIX' : undefined}
                        onClick={() => void act(c, 'finish')}
                      >
                        Concluir venda
                      </button>{' '}
                      <button type="button" disabled={busy !== null} onClick={() => void act(c, 'refund')}>
                        Devolver
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
