// The accountant's export (Gerente → Exportação): the ZIP of the period's NFC-e (or MDF-e) with
// their events, inutilizações and a summary, which the terminal fetches from the service. Then
// handed to the manager: in the desktop app a save dialog (any folder, a USB stick); in browser
// mode a download (a page cannot open a folder dialog; the browser saves it, or asks where when
// it is set to ask).

import { useState } from 'react';
import type { DocumentExport, ManagerAuthorization } from '../../electron/api/terminal-api.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { useTerminalCall } from '../components/use-terminal-call.ts';
import { terminal } from '../state/terminal.ts';
import { brasiliaToday, firstOfMonth } from './brasilia-day.ts';
import { PeriodFields, periodOf, typedPeriod } from './ReportsSection.tsx';

const size = (bytes: number): string =>
  bytes < 1024 * 1024 ? `${Math.max(1, Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1).replace('.', ',')} MB`;

export function ExportSection({ auth }: { auth: ManagerAuthorization }) {
  const today = brasiliaToday();
  const [typed, setTyped] = useState(() => typedPeriod(firstOfMonth(today), today));
  const [kind, setKind] = useState<'nfce' | 'mdfe'>('nfce');
  const [done, setDone] = useState<{ file: DocumentExport; where: string } | null>(null);
  const { error, setError, busy, run } = useTerminalCall<string>();

  const submit = async () => {
    setDone(null);
    const period = periodOf(typed);
    if ('error' in period) return setError(period.error);
    await run(async () => {
      const file = await terminal().exportDocuments({ ...auth, ...period, kind });
      const saved = await terminal().saveExport(file.fileName);
      if ('error' in saved) setError(saved.error);
      else
        setDone({
          file,
          where:
            saved.saved === null
              ? 'não salvo (cancelado)'
              : saved.saved === file.fileName
                ? 'enviado para os downloads do navegador'
                : `salvo em ${saved.saved}`,
        });
    });
  };

  return (
    <form
      className="settings-section"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h3>Exportação para o contador</h3>
      <p className="muted">
        Um ZIP com o XML de cada documento do período (pela chave de acesso), os eventos de cancelamento, as inutilizações e um resumo em CSV, de todos os
        caixas da empresa, obtido do serviço de emissão.
      </p>
      <PeriodFields value={typed} onChange={setTyped} />
      <label className="field">
        <span>Documentos</span>
        <select value={kind} onChange={(e) => setKind(e.target.value === 'mdfe' ? 'mdfe' : 'nfce')}>
          <option value="nfce">NFC-e</option>
          <option value="mdfe">MDF-e</option>
        </select>
      </label>
      <ErrorAlert error={error} />
      {done && (
        <div role="status">
          <p>
            {done.file.fileName} ({size(done.file.bytes)}): {done.where}.
          </p>
          {done.file.notTransmitted > 0 && (
            <p>
              {done.file.notTransmitted} NFC-e emitida(s) em contingência neste caixa ainda não foram transmitidas e não estão no arquivo: exporte de novo
              depois da transmissão.
            </p>
          )}
        </div>
      )}
      <div className="dialog-actions">
        <button type="submit" className="primary" disabled={busy}>
          Exportar
        </button>
      </div>
    </form>
  );
}
