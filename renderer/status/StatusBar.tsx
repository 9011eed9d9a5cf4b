// Always on screen: whether the terminal reaches the service, what is waiting in the queue (and
// for how long), the offline contingency, the printer, whether this page hears the terminal, and
// what is wrong with this computer that someone must fix (its clock, the backups, the disk).

import { useEffect, useState } from 'react';
import type { ContingencyStatus, QueueStatus } from '../../electron/api/terminal-api.ts';
import { formatTime } from '../receipt/receipt-labels.ts';
import { useStatus } from '../state/status-store.ts';

function age(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const m = Math.floor(seconds / 60);
  if (m < 60) return `${m} min`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

function useTick(ms: number): number {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    const t = setInterval(() => setNow(performance.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

function Service(props: { queue: QueueStatus | null }) {
  const { queue } = props;
  if (!queue || queue.online === null) return <span className="pill wait">Serviço: verificando…</span>;
  if (queue.online) return <span className="pill ok">Serviço: online</span>;
  return (
    <span className="pill bad" title={queue.lastError ?? undefined}>
      Serviço: offline{queue.lastError ? ` — ${queue.lastError}` : ''}
    </span>
  );
}

function Queue(props: { queue: QueueStatus | null; queueAt: number; now: number }) {
  const { queue, queueAt, now } = props;
  if (!queue) return null;
  const oldest = queue.oldestPendingAgeSeconds === null ? null : queue.oldestPendingAgeSeconds + Math.max(0, Math.floor((now - queueAt) / 1000));
  return (
    <>
      <span className={queue.pending ? 'pill wait' : 'pill ok'}>
        Fila: {queue.pending === 0 ? 'nada pendente' : `${queue.pending} pendente${queue.pending > 1 ? 's' : ''}`}
        {queue.pending > 0 && oldest !== null && ` (mais antiga há ${age(oldest)})`}
      </span>
      {queue.needsAttention > 0 && <span className="pill bad">{queue.needsAttention} NFC-e aguardando ação (F9)</span>}
    </>
  );
}

function Contingency(props: { queue: QueueStatus | null }) {
  const c = props.queue?.contingency;
  if (!c) return null;
  const tasks = c.openTasks.length;
  return (
    <>
      <ContingencyMode contingency={c} />
      {tasks > 0 && <span className="pill bad">{tasks === 1 ? '1 pendência' : `${tasks} pendências`} da contingência (F10)</span>}
    </>
  );
}

function ContingencyMode({ contingency: c }: { contingency: ContingencyStatus }) {
  return (
    <>
      {c.active ? (
        <span className="pill warn">
          Contingência ativa{c.since ? ` desde ${formatTime(c.since)}` : ''} · {c.pending} a transmitir
        </span>
      ) : (
        // Receipts issued offline still wait for the authority after the period ends.
        <span className={c.pending > 0 ? 'pill wait' : 'pill ok'}>Contingência: inativa{c.pending > 0 && ` · ${c.pending} a transmitir`}</span>
      )}
      {c.blocked && (
        <span className="pill bad" role="alert">
          Contingência: vendas bloqueadas — {c.blocked}
        </span>
      )}
      {/* Every other warning the core reports, active or not: the deadline near or past, and
          why the terminal could not go into contingency by itself (then it is not protected). */}
      {c.warnings
        .filter((w) => w !== c.blocked)
        .map((w) => (
          <span key={w} className="pill bad" role="alert">
            {w}
          </span>
        ))}
    </>
  );
}

/** The core's words about this computer (QueueStatus.alerts): each says what to fix and how. */
function Alerts(props: { queue: QueueStatus | null }) {
  return (
    <>
      {(props.queue?.alerts ?? []).map((a) => (
        <span key={a} className="pill bad" role="alert">
          {a}
        </span>
      ))}
    </>
  );
}

function Printer() {
  const printer = useStatus((s) => s.printer);
  const error = useStatus((s) => s.printerError);
  if (error) return <span className="pill bad">Impressora: {error.message}</span>;
  if (!printer) return <span className="pill wait">Impressora: verificando…</span>;
  if (printer.ready) return <span className="pill ok">Impressora: pronta ({printer.name})</span>;
  const problem = printer.problem ?? 'com problema';
  return (
    <span className="pill bad" role="alert">
      Impressora: {problem}
      {problem.includes(printer.name) ? '' : ` (${printer.name})`}
    </span>
  );
}

export function StatusBar() {
  const link = useStatus((s) => s.link);
  const queue = useStatus((s) => s.queue);
  const queueAt = useStatus((s) => s.queueAt);
  const now = useTick(1000);
  return (
    <header className="status-bar" aria-label="Situação do terminal">
      <span className="brand">Balcão</span>
      {link !== 'up' ? (
        <span className="pill bad" role="alert">
          {link === 'connecting' ? 'Conectando ao terminal…' : 'Tela sem conexão com o terminal — reconectando…'}
        </span>
      ) : null}
      <Service queue={queue} />
      <Queue queue={queue} queueAt={queueAt} now={now} />
      <Contingency queue={queue} />
      <Alerts queue={queue} />
      {/* The service's warnings (next year's IBS/CBS rates...): their heading here, the words in the title and in the settings. */}
      {queue?.serviceNotices.map((n) => (
        <span key={n} className="pill warn" title={n}>
          {n.split(':')[0]}
        </span>
      ))}
      <Printer />
    </header>
  );
}
