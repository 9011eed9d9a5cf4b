// Configurações → Tabela IBPT: the table of approximate taxes (Lei 12.741, "De Olho no Imposto")
// the receipts' vTotTrib come from (electron/core/ibpt/ibpt.ts). The manager picks the CSV IBPT
// publishes for the store's UF and sees what was imported; below, what is wrong (no table of
// the store's UF, or it expired) and the products whose NCM the table lacks, at the flat rate.

import { useEffect, useState } from 'react';
import type { IbptStatusView, IbptTableView, ManagerAuthorization } from '../../electron/api/terminal-api.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { FilePicker } from '../components/FilePicker.tsx';
import { useTerminalCall } from '../components/use-terminal-call.ts';
import { terminal } from '../state/terminal.ts';
import { fileAsBase64 } from './file-reading.ts';

const day = (iso: string) => iso.split('-').reverse().join('/');

const describe = (t: IbptTableView) => `UF ${t.uf} · versão ${t.versao} · chave ${t.chave} · vigência ${day(t.from)} a ${day(t.until)} · ${t.ncmCount} NCMs`;

export function IbptSection({ auth }: { auth: ManagerAuthorization }) {
  const [file, setFile] = useState<File | null>(null);
  const [status, setStatus] = useState<IbptStatusView | null>(null);
  const [imported, setImported] = useState<IbptTableView | null>(null);
  const { error, busy, run } = useTerminalCall();

  useEffect(() => {
    void run(async () => setStatus(await terminal().ibptStatus()));
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once, when the tab opens
  }, []);

  const submit = async () => {
    if (!file) return;
    setImported(null);
    await run(async () => {
      const next = await terminal().importIbptTable({ ...auth, fileName: file.name, csvBase64: await fileAsBase64(file) });
      setStatus(next);
      setImported(next.tables.find((t) => t.fileName === file.name) ?? null);
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
      <h3>Tabela IBPT (tributos aproximados, Lei 12.741)</h3>
      <p className="muted">
        O arquivo CSV que o IBPT publica para a UF da loja (TabelaIBPTax‹UF›‹versão›.csv). Cada item da NFC-e leva os tributos aproximados da tabela vigente no
        dia, pelo NCM; um NCM fora da tabela usa a alíquota média.
      </p>
      <FilePicker label="Arquivo da tabela IBPT (.csv)" accept=".csv,text/csv" file={file} onChange={setFile} />
      <ErrorAlert error={error} />
      <button type="submit" disabled={!file || busy}>
        Importar tabela IBPT
      </button>
      {imported && <p role="status">Tabela importada: {describe(imported)}.</p>}
      {status && (
        <div className="ibpt-status">
          <p>{status.current ? `Tabela em uso: ${describe(status.current)}` : 'Nenhuma tabela em uso.'}</p>
          {status.warning && <p role="alert">{status.warning}</p>}
          {status.fallbackCount > 0 && (
            <table className="rejections">
              <caption>
                Produtos com a alíquota média (NCM fora da tabela): {status.fallbackCount}
                {status.fallbackCount > status.fallbackProducts.length && `, os primeiros ${status.fallbackProducts.length}`}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Código</th>
                  <th scope="col">Descrição</th>
                  <th scope="col">NCM</th>
                </tr>
              </thead>
              <tbody>
                {status.fallbackProducts.map((p) => (
                  <tr key={p.code}>
                    <td>{p.code}</td>
                    <td>{p.description}</td>
                    <td>{p.ncm}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </form>
  );
}
