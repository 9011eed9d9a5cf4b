// The settings forms, one per section, each saved on its own with the manager's authorization.

import { useId, useState } from 'react';
import type {
  CatalogImportReport,
  CertificateView,
  CompanyProfile,
  ContingencyStatus,
  ManagerAuthorization,
  PrinterSettings,
  SerialLineSettings,
  SettingsPatch,
  TerminalSettings,
} from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { useTerminalCall } from '../components/use-terminal-call.ts';
import { FilePicker } from '../components/FilePicker.tsx';
import { JustificationField, justificationOk } from '../components/JustificationField.tsx';
import { settingsSaved } from '../state/settings-store.ts';
import { ContingencyTasks } from './ContingencyTasks.tsx';
import { contingencyAction } from '../state/status-store.ts';
import { terminal } from '../state/terminal.ts';
import { fileAsBase64, fileAsText } from './file-reading.ts';
import { formOf, IbsCbsFields, profileOf } from './IbsCbsFields.tsx';
import { parseCentsOrZero } from '../cash/money-input.ts';
import { centsToInput } from '../money/money.ts';
import { unmaskTaxId } from '../../base/common/tax-ids.ts';

type SectionProps = { settings: TerminalSettings; auth: ManagerAuthorization };

function useSave(auth: ManagerAuthorization) {
  const [error, setError] = useState<TerminalFailure | null>(null);
  const [saved, setSaved] = useState(false);
  const save = async (patch: SettingsPatch) => {
    setError(null);
    setSaved(false);
    try {
      settingsSaved(await terminal().updateSettings(patch, auth));
      setSaved(true);
    } catch (err) {
      setError(asFailure(err));
    }
  };
  return { error, saved, save };
}

function Outcome(props: { error: TerminalFailure | null; saved: boolean }) {
  return (
    <>
      <ErrorAlert error={props.error} />
      {props.saved && <p role="status">Salvo.</p>}
    </>
  );
}

export function Text(props: { label: string; value: string; onChange: (v: string) => void; type?: string; disabled?: boolean; hint?: string }) {
  const hintId = useId();
  return (
    <label className="field">
      <span>{props.label}</span>
      <input
        type={props.type ?? 'text'}
        autoComplete="off"
        disabled={props.disabled}
        value={props.value}
        aria-describedby={props.hint ? hintId : undefined}
        onChange={(e) => props.onChange(e.target.value)}
      />
      {props.hint && (
        <small id={hintId} className="muted small-text">
          {props.hint}
        </small>
      )}
    </label>
  );
}

export function ServiceSection({ settings, auth }: SectionProps) {
  const [serviceUrl, setServiceUrl] = useState(settings.serviceUrl);
  const [fingerprint, setFingerprint] = useState(settings.serviceFingerprint ?? '');
  const [token, setToken] = useState('');
  const [series, setSeries] = useState(String(settings.series));
  const [name, setName] = useState(settings.terminal.name);
  const { error, saved, save } = useSave(auth);
  return (
    <form
      className="settings-section"
      onSubmit={(e) => {
        e.preventDefault();
        void save({
          serviceUrl: serviceUrl.trim(),
          serviceFingerprint: fingerprint.trim() === '' ? null : fingerprint.trim(),
          series: Number(series),
          terminalName: name,
          ...(token && { token }),
        });
      }}
    >
      <h3>Serviço de emissão</h3>
      <Text
        label="Endereço do serviço"
        value={serviceUrl}
        onChange={setServiceUrl}
        hint="Nesta máquina: http://127.0.0.1:8765. Em outra máquina da loja, só https:// (ex.: https://192.168.0.10:8765)."
      />
      <Text
        label="Impressão digital do certificado do serviço (SHA-256)"
        value={fingerprint}
        onChange={setFingerprint}
        hint="A que o serviço mostra ao iniciar. Com ela, este caixa só fala com aquele certificado; em branco, só com um certificado reconhecido pelo sistema."
      />
      <Text label={settings.tokenSet ? 'Token de acesso (em branco mantém o atual)' : 'Token de acesso'} type="password" value={token} onChange={setToken} />
      <Text label="Nome deste caixa" value={name} onChange={setName} hint="Como os outros caixas da loja veem este (ex.: Caixa 2)." />
      <Text
        label="Série da NFC-e"
        value={series}
        onChange={setSeries}
        hint="Cada caixa da loja emite na sua série; o serviço recusa uma série que outro caixa da empresa já usa."
      />
      <Outcome error={error} saved={saved} />
      <button type="submit">Salvar serviço</button>
    </form>
  );
}

/** A labelled select over `options`; the value keeps its type (string or number). */
function Choice<T extends string | number>(props: { label: string; value: T; options: readonly { id: T; label: string }[]; onChange: (v: T) => void }) {
  return (
    <label className="field">
      <span>{props.label}</span>
      <select
        value={props.value}
        onChange={(e) => {
          const chosen = props.options.find((o) => String(o.id) === e.target.value);
          if (chosen) props.onChange(chosen.id);
        }}
      >
        {props.options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

const PROFILES: { id: PrinterSettings['profile']; label: string }[] = [
  { id: 'epson-tm-t20', label: 'Epson TM-T20' },
  { id: 'elgin-i9', label: 'Elgin i9' },
  { id: 'bematech-mp4200-escpos', label: 'Bematech MP-4200 (ESC/POS)' },
  { id: 'generic-escpos', label: 'ESC/POS genérica' },
];

const KINDS: { id: PrinterSettings['kind']; label: string }[] = [
  { id: 'virtual', label: 'Virtual (mostra na tela)' },
  { id: 'tcp', label: 'Rede (TCP/IP)' },
  { id: 'usb', label: 'USB' },
  { id: 'serial', label: 'Serial (RS-232 ou porta COM virtual)' },
  { id: 'device', label: 'Dispositivo do sistema (/dev/usb/lp0)' },
  { id: 'file', label: 'Arquivo' },
  { id: 'system', label: 'Impressora do sistema (fila do CUPS ou do Windows)' },
];

/** What goes in the address for each kind. */
const ADDRESS_HINTS: Record<PrinterSettings['kind'], string> = {
  virtual: 'A impressora virtual não tem endereço.',
  tcp: 'IP ou nome da impressora, com a porta se não for 9100 (ex.: 192.168.0.50:9100).',
  usb: 'Fabricante:produto em hexadecimal (ex.: 04b8:0e15), ou em branco para usar a primeira impressora USB encontrada.',
  serial: 'A porta serial (ex.: /dev/ttyUSB0 no Linux, COM3 no Windows).',
  device: 'O dispositivo que o sistema criou para a impressora (ex.: /dev/usb/lp0).',
  file: 'O arquivo que recebe os trabalhos de impressão.',
  system:
    'O nome da fila no CUPS deste computador (ex.: TM-T20; lpstat -p lista as filas), ou o endereço IPP da fila (ex.: ipp://servidor:631/printers/TM-T20; ' +
    'no Windows, http://servidor/printers/TM-T20/.printer, com a Impressão via Internet ativada). Os bytes vão direto à impressora, sem passar pelo driver (como lp -o raw).',
};

/**
 * What the screen shows for a serial printer not yet set up; the terminal core applies the same
 * when a saved serial printer has no line settings.
 */
const DEFAULT_SERIAL_LINE: SerialLineSettings = { baudRate: 9600, parity: 'none', stopBits: 1, flowControl: 'rtscts' };

const BAUD_RATES: { id: SerialLineSettings['baudRate']; label: string }[] = ([1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200] as const).map((id) => ({
  id,
  label: String(id),
}));

const PARITIES: { id: SerialLineSettings['parity']; label: string }[] = [
  { id: 'none', label: 'Nenhuma' },
  { id: 'even', label: 'Par' },
  { id: 'odd', label: 'Ímpar' },
];

const STOP_BITS: { id: SerialLineSettings['stopBits']; label: string }[] = [
  { id: 1, label: '1' },
  { id: 2, label: '2' },
];

const FLOW_CONTROLS: { id: SerialLineSettings['flowControl']; label: string }[] = [
  { id: 'rtscts', label: 'Hardware (RTS/CTS)' },
  { id: 'xonxoff', label: 'Software (XON/XOFF)' },
  { id: 'none', label: 'Nenhum (pode perder dados)' },
];

function SerialLineFields(props: { line: SerialLineSettings; onChange: (line: SerialLineSettings) => void }) {
  const { line, onChange } = props;
  return (
    <fieldset>
      <legend>Porta serial (como está configurada na impressora; sempre 8 bits de dados)</legend>
      <Choice label="Velocidade (baud)" value={line.baudRate} options={BAUD_RATES} onChange={(baudRate) => onChange({ ...line, baudRate })} />
      <Choice label="Paridade" value={line.parity} options={PARITIES} onChange={(parity) => onChange({ ...line, parity })} />
      <Choice label="Bits de parada" value={line.stopBits} options={STOP_BITS} onChange={(stopBits) => onChange({ ...line, stopBits })} />
      <Choice label="Controle de fluxo" value={line.flowControl} options={FLOW_CONTROLS} onChange={(flowControl) => onChange({ ...line, flowControl })} />
    </fieldset>
  );
}

const PAPER_WIDTHS: { id: PrinterSettings['paperWidth']; label: string }[] = [
  { id: 80, label: '80 mm' },
  { id: 58, label: '58 mm' },
];

const CRTS: { id: CompanyProfile['crt']; label: string }[] = [
  { id: 1, label: '1 Simples Nacional' },
  { id: 2, label: '2 Simples Nacional, excesso de sublimite' },
  { id: 3, label: '3 Regime normal' },
  { id: 4, label: '4 Simples Nacional, MEI' },
];

const ENVIRONMENTS: { id: CompanyProfile['environment']; label: string }[] = [
  { id: 'homologacao', label: 'Homologação (testes)' },
  { id: 'producao', label: 'Produção' },
];

const QR_VERSIONS: { id: CompanyProfile['qrCodeVersion']; label: string }[] = [
  { id: 2, label: '2' },
  { id: 3, label: '3' },
];

export function PrinterSection({ settings, auth }: SectionProps) {
  const [p, setP] = useState<PrinterSettings>(settings.printer);
  const serialLine = p.serial ?? DEFAULT_SERIAL_LINE;
  const { error, saved, save } = useSave(auth);
  return (
    <form
      className="settings-section"
      onSubmit={(e) => {
        e.preventDefault();
        const { serial: _serial, ...rest } = p;
        const address = p.kind === 'virtual' ? null : (p.address ?? '').trim();
        void save({
          printer: { ...rest, address: p.kind === 'usb' && !address ? null : address, ...(p.kind === 'serial' && { serial: serialLine }) },
        });
      }}
    >
      <h3>Impressora</h3>
      <Choice label="Tipo de impressora" value={p.kind} options={KINDS} onChange={(kind) => setP({ ...p, kind })} />
      <Text
        label={p.kind === 'system' ? 'Fila da impressora do sistema (nome ou endereço IPP)' : 'Endereço da impressora (IP:porta, dispositivo ou arquivo)'}
        hint={ADDRESS_HINTS[p.kind]}
        disabled={p.kind === 'virtual'}
        value={p.address ?? ''}
        onChange={(v) => setP({ ...p, address: v })}
      />
      {p.kind === 'serial' && <SerialLineFields line={serialLine} onChange={(serial) => setP({ ...p, serial })} />}
      <Choice label="Modelo" value={p.profile} options={PROFILES} onChange={(profile) => setP({ ...p, profile })} />
      <Choice label="Largura do papel" value={p.paperWidth} options={PAPER_WIDTHS} onChange={(paperWidth) => setP({ ...p, paperWidth })} />
      <Outcome error={error} saved={saved} />
      <button type="submit">Salvar impressora</button>
    </form>
  );
}

const emptyCompany = (): CompanyProfile => ({
  cnpj: '',
  ie: '',
  xNome: '',
  address: { xLgr: '', nro: '', xBairro: '', cMun: '', xMun: '', UF: '', CEP: '' },
  crt: 1,
  environment: 'homologacao',
  qrCodeVersion: 2,
  cscId: null,
});

export function CompanySection({ settings, auth }: SectionProps) {
  const [c, setC] = useState<CompanyProfile>(settings.company ?? emptyCompany());
  const [cscToken, setCscToken] = useState('');
  const [ibsCbs, setIbsCbs] = useState(() => formOf(settings.company?.ibsCbs));
  const { error, saved, save } = useSave(auth);
  const a = c.address;
  const setA = (patch: Partial<CompanyProfile['address']>) => setC({ ...c, address: { ...a, ...patch } });
  return (
    <form
      className="settings-section"
      onSubmit={(e) => {
        e.preventDefault();
        const { cscSet: _cscSet, ...company } = c;
        void save({ company: { ...company, ibsCbs: profileOf(ibsCbs), ...(cscToken && { cscToken }) } });
      }}
    >
      <h3>Empresa</h3>
      <div className="grid-2">
        <Text label="CNPJ" value={c.cnpj} onChange={(v) => setC({ ...c, cnpj: unmaskTaxId(v) })} />
        <Text label="Inscrição estadual" value={c.ie} onChange={(v) => setC({ ...c, ie: v })} />
        <Text label="Razão social" value={c.xNome} onChange={(v) => setC({ ...c, xNome: v })} />
        <Text label="Nome fantasia" value={c.xFant ?? ''} onChange={(v) => setC({ ...c, xFant: v || undefined })} />
        <Text label="Logradouro" value={a.xLgr} onChange={(v) => setA({ xLgr: v })} />
        <Text label="Número" value={a.nro} onChange={(v) => setA({ nro: v })} />
        <Text label="Complemento" value={a.xCpl ?? ''} onChange={(v) => setA({ xCpl: v || undefined })} />
        <Text label="Bairro" value={a.xBairro} onChange={(v) => setA({ xBairro: v })} />
        <Text label="Código do município (IBGE)" value={a.cMun} onChange={(v) => setA({ cMun: v })} />
        <Text label="Município" value={a.xMun} onChange={(v) => setA({ xMun: v })} />
        <Text label="UF" value={a.UF} onChange={(v) => setA({ UF: v.toUpperCase() })} />
        <Text label="CEP" value={a.CEP} onChange={(v) => setA({ CEP: v.replace(/\D/g, '') })} />
        <Text label="Telefone" value={a.fone ?? ''} onChange={(v) => setA({ fone: v || undefined })} />
        <Choice label="Regime tributário (CRT)" value={c.crt} options={CRTS} onChange={(crt) => setC({ ...c, crt })} />
        <Choice label="Ambiente" value={c.environment} options={ENVIRONMENTS} onChange={(environment) => setC({ ...c, environment })} />
        <Choice label="Versão do QR Code" value={c.qrCodeVersion} options={QR_VERSIONS} onChange={(qrCodeVersion) => setC({ ...c, qrCodeVersion })} />
        <Text label="Identificador do CSC" value={c.cscId ?? ''} onChange={(v) => setC({ ...c, cscId: v || null })} />
        <Text label={c.cscSet ? 'CSC (em branco mantém o atual)' : 'CSC'} type="password" value={cscToken} onChange={setCscToken} />
      </div>
      <IbsCbsFields crt={c.crt} value={ibsCbs} onChange={setIbsCbs} />
      <Outcome error={error} saved={saved} />
      <button type="submit">Salvar empresa</button>
    </form>
  );
}

export function ContingencySection({ settings, auth, status }: SectionProps & { status: ContingencyStatus | null }) {
  const c = settings.contingency;
  const [threshold, setThreshold] = useState(String(c.failureThreshold));
  const [maxReceipts, setMaxReceipts] = useState(String(c.maxReceipts));
  const [maxHours, setMaxHours] = useState(String(c.maxHours));
  const [series, setSeries] = useState(c.series === null ? '' : String(c.series));
  const [justification, setJustification] = useState('');
  const [actionError, setActionError] = useState<TerminalFailure | null>(null);
  const { error, saved, save } = useSave(auth);

  const toggle = async () => {
    setActionError(null);
    try {
      await contingencyAction(() =>
        status?.active ? terminal().leaveContingency(auth) : terminal().enterContingency({ ...auth, justification: justification.trim() }),
      );
    } catch (err) {
      setActionError(asFailure(err));
    }
  };

  return (
    <div className="settings-section">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save({
            contingency: {
              failureThreshold: Number(threshold),
              maxReceipts: Number(maxReceipts),
              maxHours: Number(maxHours),
              series: series.trim() === '' ? null : Number(series),
            },
          });
        }}
      >
        <h3>Contingência offline</h3>
        <Text label="Falhas seguidas para entrar em contingência" value={threshold} onChange={setThreshold} />
        <Text label="Máximo de NFC-e em contingência" value={maxReceipts} onChange={setMaxReceipts} />
        <Text label="Máximo de horas em contingência" value={maxHours} onChange={setMaxHours} />
        <Text label="Série de contingência (em branco: a mesma)" value={series} onChange={setSeries} />
        <Outcome error={error} saved={saved} />
        <button type="submit">Salvar limites</button>
      </form>
      <div className="contingency-toggle">
        <p>Situação: {status?.active ? `ativa${status.reason ? ` (${status.reason})` : ''}` : 'inativa'}</p>
        {!status?.active && <JustificationField label="Justificativa da contingência" value={justification} onChange={setJustification} />}
        <ErrorAlert error={actionError} />
        <button type="button" disabled={!status?.active && !justificationOk(justification)} onClick={() => void toggle()}>
          {status?.active ? 'Sair da contingência' : 'Entrar em contingência'}
        </button>
      </div>
      <ContingencyTasks status={status} auth={auth} />
    </div>
  );
}

export function CertificateSection({ certificate, auth }: { certificate: CertificateView; auth: ManagerAuthorization }) {
  const [file, setFile] = useState<File | null>(null);
  const [password, setPassword] = useState('');
  const [current, setCurrent] = useState<CertificateView>(certificate);
  const [error, setError] = useState<TerminalFailure | null>(null);
  const [done, setDone] = useState(false);
  const submit = async () => {
    if (!file) return;
    setError(null);
    setDone(false);
    try {
      setCurrent(await terminal().importCertificate({ ...auth, pfxBase64: await fileAsBase64(file), password }));
      setDone(true);
    } catch (err) {
      setError(asFailure(err));
    }
  };
  return (
    <form
      className="settings-section"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h3>Certificado digital A1</h3>
      <p>
        {current
          ? `${current.subject} · CNPJ ${current.cnpj} · válido até ${new Date(current.notAfter).toLocaleDateString('pt-BR')}`
          : 'Nenhum certificado instalado.'}
      </p>
      <FilePicker label="Arquivo do certificado (.pfx)" accept=".pfx,.p12,application/x-pkcs12" file={file} onChange={setFile} />
      <Text label="Senha do certificado" type="password" value={password} onChange={setPassword} />
      <ErrorAlert error={error} />
      {done && <p role="status">Certificado importado.</p>}
      <button type="submit" disabled={!file || !password}>
        Importar certificado
      </button>
    </form>
  );
}

export function CatalogSection({ auth }: { auth: ManagerAuthorization }) {
  const [file, setFile] = useState<File | null>(null);
  const [report, setReport] = useState<CatalogImportReport | null>(null);
  const { error, busy, run } = useTerminalCall();
  const submit = async () => {
    if (!file) return;
    setReport(null);
    await run(async () => setReport(await terminal().importCatalogCsv(await fileAsText(file), auth)));
  };
  return (
    <form
      className="settings-section"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <h3>Catálogo de produtos</h3>
      <p className="muted">
        CSV com cabeçalho: codigo;gtin;descricao;ncm;cfop;unidade;preco;grupo_tributario e, opcionais, cst_ibs_cbs;cclasstrib (classificação do IBS/CBS do
        produto; em branco, vale a padrão da empresa)
      </p>
      <FilePicker label="Arquivo do catálogo (.csv)" accept=".csv,text/csv" file={file} onChange={setFile} />
      <ErrorAlert error={error} />
      <button type="submit" disabled={!file || busy}>
        Importar catálogo
      </button>
      {report && (
        <div role="status">
          <p>
            Importados: {report.imported} · atualizados: {report.updated} · rejeitados: {report.rejected.length}
          </p>
          {report.rejected.length > 0 && (
            <table className="rejections">
              <caption>Linhas rejeitadas</caption>
              <thead>
                <tr>
                  <th scope="col">Linha</th>
                  <th scope="col">Código</th>
                  <th scope="col">Campo</th>
                  <th scope="col">Problema</th>
                </tr>
              </thead>
              <tbody>
                {report.rejected.map((r, i) => (
                  <tr key={`${r.line}-${r.field}-${i}`}>
                    <td>{r.line}</td>
                    <td>{r.code ?? '—'}</td>
                    <td>{r.field}</td>
                    <td>{r.message}</td>
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

export function CashSection({ settings, auth }: SectionProps) {
  const [limit, setLimit] = useState(centsToInput(settings.cash.pinAboveCents));
  const [typed, setTyped] = useState<string | null>(null);
  const { error, saved, save } = useSave(auth);
  return (
    <form
      className="settings-section"
      onSubmit={(e) => {
        e.preventDefault();
        try {
          setTyped(null);
          void save({ cash: { pinAboveCents: parseCentsOrZero(limit, 'Limite') } });
        } catch (err) {
          setTyped((err as Error).message);
        }
      }}
    >
      <h3>Caixa</h3>
      <Text
        label="Sangria e suprimento acima de (R$) pedem o PIN do gerente"
        value={limit}
        onChange={setLimit}
        hint="0,00: todos pedem o PIN. O fechamento do caixa não pede PIN: a contagem é às cegas e o relatório sai impresso para as assinaturas."
      />
      <ErrorAlert error={typed} />
      <Outcome error={error} saved={saved} />
      <button type="submit">Salvar caixa</button>
    </form>
  );
}

/** The store's PIX key for the static QR Code (docs/pix.md); empty turns static PIX off. */
export function PixSection({ settings, auth }: SectionProps) {
  const [key, setKey] = useState(settings.pix.key ?? '');
  const { error, saved, save } = useSave(auth);
  return (
    <form
      className="settings-section"
      onSubmit={(e) => {
        e.preventDefault();
        void save({ pix: { key: key.trim() || null } });
      }}
    >
      <h3>PIX</h3>
      <Text
        label="Chave PIX da loja"
        value={key}
        onChange={setKey}
        hint="CPF ou CNPJ, e-mail, telefone (+55DDDNÚMERO) ou chave aleatória. O PIX Estático mostra o QR Code com esta chave, o valor e a referência da venda; o operador confere no aplicativo do banco e confirma. Vazio: sem PIX Estático."
      />
      <Outcome error={error} saved={saved} />
      <button type="submit">Salvar PIX</button>
    </form>
  );
}

export function RetentionSection({ settings, auth }: SectionProps) {
  const [days, setDays] = useState(String(settings.retention.days));
  const { error, saved, save } = useSave(auth);
  return (
    <form
      className="settings-section"
      onSubmit={(e) => {
        e.preventDefault();
        void save({ retention: { days: Number(days.trim()) } });
      }}
    >
      <h3>Retenção de documentos</h3>
      <Text
        label="Dias de documentos guardados neste caixa"
        value={days}
        onChange={setDays}
        type="number"
        hint="De 7 a 1825 (padrão 90). Depois disso, o caixa apaga o XML e o pedido das NFC-e já resolvidas que o serviço de emissão guarda (por cinco anos): a reimpressão busca o XML de novo no serviço, e os relatórios continuam com os totais de cada dia."
      />
      <Outcome error={error} saved={saved} />
      <button type="submit">Salvar retenção</button>
    </form>
  );
}
