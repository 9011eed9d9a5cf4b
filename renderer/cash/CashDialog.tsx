// "Caixa": the open session (who opened it, the float, the sangrias and suprimentos so far), a
// sangria or a suprimento (the manager's PIN asked for above the configured amount), and the
// closing: the cashier counts each payment method first (a blind count) and only then sees what
// the sales say, method by method, and the difference; the report is printed by the core.
//
// The session shown is asked of the core again when the dialog opens and when the closing form
// does: sales finished since the last till action may have used a method the count must ask for.

import { useEffect, useState } from 'react';
import type { CashMovementKind, CashSessionView, ManagerAuthorization } from '../../electron/api/terminal-api.ts';
import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { emptyAuthorization, ManagerFields } from '../components/ManagerFields.tsx';
import type { InputError } from '../money/money.ts';
import { formatCents, parseCents } from '../money/money.ts';
import { addMovement, closeCash, dismissClosed, loadCash, useCash } from '../state/cash-store.ts';
import { newSale } from '../state/sale-store.ts';
import { closeDialog } from '../state/ui-store.ts';
import { wallClock } from '../../base/common/brasilia.ts';
import { ClosingView } from './ClosingView.tsx';
import { parseCentsOrZero } from './money-input.ts';

type Mode = 'resumo' | CashMovementKind | 'fechar';

/** "14:03", the hour and minute in Brasília. */
const time = (iso: string): string => {
  const p = wallClock(new Date(iso));
  return `${p.hour}:${p.minute}`;
};

function Summary(props: { session: CashSessionView; onMode: (m: Mode) => void; notice: string | null }) {
  const { session, onMode, notice } = props;
  const total = (kind: CashMovementKind) => session.movements.filter((m) => m.kind === kind).reduce((t, m) => t + m.amountCents, 0);
  return (
    <>
      <dl className="summary">
        <div>
          <dt>Caixa</dt>
          <dd>nº {session.number}</dd>
        </div>
        <div>
          <dt>Aberto por</dt>
          <dd>
            {session.openedBy} às {time(session.openedAt)}
          </dd>
        </div>
        <div>
          <dt>Troco inicial</dt>
          <dd>{formatCents(session.floatCents)}</dd>
        </div>
        <div>
          <dt>Sangrias</dt>
          <dd>{formatCents(total('sangria'))}</dd>
        </div>
        <div>
          <dt>Suprimentos</dt>
          <dd>{formatCents(total('suprimento'))}</dd>
        </div>
      </dl>
      {notice && <p role="status">{notice}</p>}
      {session.movements.length > 0 && (
        <table className="payments">
          <caption>Sangrias e suprimentos</caption>
          <tbody>
            {session.movements.map((m) => (
              <tr key={m.id}>
                <td>{time(m.at)}</td>
                <td>{m.kind === 'sangria' ? 'Sangria' : 'Suprimento'}</td>
                <td>{m.reason}</td>
                <td>{m.authorizedBy ? `autorizado por ${m.authorizedBy}` : ''}</td>
                <td className="num">{formatCents(m.kind === 'sangria' ? -m.amountCents : m.amountCents)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="dialog-actions">
        <button type="button" onClick={() => onMode('sangria')}>
          Sangria
        </button>
        <button type="button" onClick={() => onMode('suprimento')}>
          Suprimento
        </button>
        <button type="button" className="primary" onClick={() => onMode('fechar')}>
          Fechar caixa
        </button>
      </div>
    </>
  );
}

function MovementForm(props: { kind: CashMovementKind; session: CashSessionView; onDone: (notice: string | null) => void }) {
  const { kind, session, onDone } = props;
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [auth, setAuth] = useState<ManagerAuthorization>(emptyAuthorization);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const label = kind === 'sangria' ? 'sangria' : 'suprimento';
  let typed: number | null = null;
  try {
    typed = amount.trim() ? parseCents(amount, 'Valor') : null;
  } catch {
    typed = null;
  }
  const needsPin = typed !== null && typed > session.pinAboveCents;

  const submit = async () => {
    let amountCents: number;
    try {
      amountCents = parseCents(amount, 'Valor');
    } catch (err) {
      setError((err as InputError).message);
      return;
    }
    setBusy(true);
    const failure = await addMovement({ kind, amountCents, reason, ...(needsPin && { managerId: auth.managerId, pin: auth.pin }) });
    setBusy(false);
    if (failure) setError(failure.message);
    else onDone(`${kind === 'sangria' ? 'Sangria' : 'Suprimento'} de ${formatCents(amountCents)} registrad${kind === 'sangria' ? 'a' : 'o'}.`);
  };

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h3>{kind === 'sangria' ? 'Sangria (retirada de dinheiro)' : 'Suprimento (dinheiro posto no caixa)'}</h3>
      <label className="field">
        <span>Valor</span>
        <input autoFocus className="big-input" inputMode="decimal" autoComplete="off" value={amount} onChange={(e) => setAmount(e.target.value)} />
      </label>
      <label className="field">
        <span>Motivo</span>
        <input autoComplete="off" value={reason} onChange={(e) => setReason(e.target.value)} />
      </label>
      <p className="muted">
        {session.pinAboveCents > 0
          ? `Acima de ${formatCents(session.pinAboveCents)}, o gerente autoriza com o PIN.`
          : 'O gerente autoriza cada sangria e cada suprimento com o PIN.'}
      </p>
      {needsPin && <ManagerFields value={auth} onChange={setAuth} />}
      <ErrorAlert error={error} />
      <div className="dialog-actions">
        <button type="button" onClick={() => onDone(null)}>
          Voltar
        </button>
        <button type="submit" className="primary" disabled={busy}>
          Registrar {label}
        </button>
      </div>
    </form>
  );
}

function CloseForm(props: { session: CashSessionView; onBack: () => void }) {
  const { session, onBack } = props;
  const [operator, setOperator] = useState(session.openedBy);
  const [counts, setCounts] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    void loadCash();
  }, []);

  const submit = async () => {
    let parsed: { tPag: string; countedCents: number }[];
    try {
      parsed = session.countMethods.map((m) => ({ tPag: m.tPag, countedCents: parseCentsOrZero(counts[m.tPag] ?? '', `Contado em ${m.description}`) }));
    } catch (err) {
      setError((err as Error).message);
      return;
    }
    setBusy(true);
    const failure = await closeCash({ counts: parsed, operator });
    setBusy(false);
    if (failure) {
      setError(failure.message);
      // A method to count that the form lacks (a sale finished meanwhile): the form gains it.
      if (failure.field?.startsWith('counts.')) void loadCash();
    } else {
      // The last sale's receipt goes with the session: the counter asks for the till next.
      newSale();
    }
  };

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h3>Fechamento do caixa nº {session.number}</h3>
      <p className="muted">Conte o dinheiro da gaveta e os comprovantes de cada forma de pagamento. O valor esperado aparece depois do fechamento.</p>
      <label className="field">
        <span>Quem fecha o caixa</span>
        <input autoComplete="off" value={operator} onChange={(e) => setOperator(e.target.value)} />
      </label>
      {session.countMethods.map((m, i) => (
        <label key={m.tPag} className="field">
          <span>Contado em {m.description}</span>
          <input
            autoFocus={i === 0}
            inputMode="decimal"
            autoComplete="off"
            value={counts[m.tPag] ?? ''}
            onChange={(e) => setCounts({ ...counts, [m.tPag]: e.target.value })}
          />
        </label>
      ))}
      <ErrorAlert error={error} />
      <div className="dialog-actions">
        <button type="button" onClick={onBack}>
          Voltar
        </button>
        <button type="submit" className="primary" disabled={busy}>
          Fechar caixa
        </button>
      </div>
    </form>
  );
}

export function CashDialog() {
  const session = useCash((s) => s.session);
  const closed = useCash((s) => s.closed);
  const [mode, setMode] = useState<Mode>('resumo');
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => {
    void loadCash();
  }, []);
  const close = () => {
    dismissClosed();
    closeDialog();
  };

  return (
    <Dialog title="Caixa" onClose={close} wide>
      {closed ? (
        <ClosingView session={closed} onDone={close} />
      ) : !session ? (
        <p role="status">O caixa está fechado: abra-o na tela de vendas.</p>
      ) : mode === 'resumo' ? (
        <Summary
          session={session}
          onMode={(m) => {
            setNotice(null);
            setMode(m);
          }}
          notice={notice}
        />
      ) : mode === 'fechar' ? (
        <CloseForm session={session} onBack={() => setMode('resumo')} />
      ) : (
        <MovementForm
          key={mode}
          kind={mode}
          session={session}
          onDone={(n) => {
            setNotice(n);
            setMode('resumo');
          }}
        />
      )}
    </Dialog>
  );
}
