// Gerente › PIX (PSP): how this checkout reaches the store's bank for dynamic PIX (docs/pix.md).
// The secrets never come back from the core: a set one shows "configurado" and, left empty,
// stays as it is. "Testar conexão" asks the PSP for a token with what the form holds, before
// (or without) saving it.

import { useEffect, useState } from 'react';
import type { ManagerAuthorization, PspConnectionTest, PspSettingsInput, PspSettingsView } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { FilePicker } from '../components/FilePicker.tsx';
import { loadSettings } from '../state/settings-store.ts';
import { terminal } from '../state/terminal.ts';
import { fileAsBase64, fileAsText } from './file-reading.ts';
import { Text } from './SettingsSections.tsx';

type CertKind = 'pfx' | 'pem';

const CONFIGURED = 'configurado — deixe em branco para manter';

export function PspSection({ auth }: { auth: ManagerAuthorization }) {
  const [view, setView] = useState<PspSettingsView | null>(null);
  const [loadError, setLoadError] = useState<TerminalFailure | null>(null);
  useEffect(() => {
    terminal()
      .pspSettings()
      .then(setView, (err: unknown) => setLoadError(asFailure(err)));
  }, []);
  if (loadError) return <ErrorAlert error={`Não foi possível carregar o PSP: ${loadError.message}`} />;
  if (!view) return <p className="muted">Carregando…</p>;
  return <PspForm view={view} auth={auth} onSaved={setView} />;
}

function PspForm({ view, auth, onSaved }: { view: PspSettingsView; auth: ManagerAuthorization; onSaved: (v: PspSettingsView) => void }) {
  const [baseUrl, setBaseUrl] = useState(view.baseUrl);
  const [tokenUrl, setTokenUrl] = useState(view.tokenUrl);
  const [clientId, setClientId] = useState(view.clientId);
  const [clientSecret, setClientSecret] = useState('');
  const [pspCnpj, setPspCnpj] = useState(view.pspCnpj);
  const [certKind, setCertKind] = useState<CertKind>(view.certificateKind ?? 'pfx');
  const [pfx, setPfx] = useState<File | null>(null);
  const [pfxPassword, setPfxPassword] = useState('');
  const [certPem, setCertPem] = useState<File | null>(null);
  const [keyPem, setKeyPem] = useState<File | null>(null);
  const [ca, setCa] = useState<File | null>(null);
  const [removeCa, setRemoveCa] = useState(false);
  const [pixKey, setPixKey] = useState(view.pixKey ?? '');
  const [printQr, setPrintQr] = useState(view.printQr);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<TerminalFailure | null>(null);
  const [saved, setSaved] = useState(false);
  const [test, setTest] = useState<PspConnectionTest | null>(null);

  /** The form as the core takes it: a file left unchosen keeps what is stored. */
  const input = async (): Promise<PspSettingsInput> => {
    let certificate: PspSettingsInput['certificate'] = null;
    if (certKind === 'pfx' && pfx) certificate = { kind: 'pfx', pfxBase64: await fileAsBase64(pfx), password: pfxPassword };
    if (certKind === 'pem' && (certPem || keyPem))
      certificate = { kind: 'pem', certPem: certPem ? await fileAsText(certPem) : '', keyPem: keyPem ? await fileAsText(keyPem) : '' };
    return {
      baseUrl,
      tokenUrl,
      clientId,
      clientSecret,
      certificate,
      ...(ca ? { caPem: await fileAsText(ca) } : removeCa ? { caPem: null } : {}),
      pspCnpj,
      pixKey,
      printQr,
    };
  };

  const run = async (action: 'save' | 'test') => {
    setBusy(true);
    setError(null);
    setSaved(false);
    setTest(null);
    try {
      if (action === 'test') {
        setTest(await terminal().testPspConnection(await input(), auth));
      } else {
        const after = await terminal().savePspSettings(await input(), auth);
        setClientSecret('');
        setPfx(null);
        setPfxPassword('');
        setCertPem(null);
        setKeyPem(null);
        setCa(null);
        setRemoveCa(false);
        onSaved(after);
        setSaved(true);
        void loadSettings(); // the PIX key is the Caixa tab's too
      }
    } catch (err) {
      setError(asFailure(err));
    } finally {
      setBusy(false);
    }
  };

  const certificateNow =
    view.certificateKind === null ? 'nenhum' : `configurado (${view.certificateKind === 'pfx' ? 'PKCS#12' : 'PEM'}) — escolha outro só para trocar`;
  return (
    <form
      className="settings-section"
      onSubmit={(e) => {
        e.preventDefault();
        void run('save');
      }}
    >
      <h3>PIX (PSP)</h3>
      <p className="muted">
        O PSP (banco ou instituição de pagamento) que recebe o PIX Dinâmico: a API Pix do Banco Central com OAuth2 e certificado do cliente (TLS mútuo). Os
        dados vêm do PSP ao contratar o PIX com API.
      </p>
      <p>{view.configured ? 'PSP configurado.' : 'Nenhum PSP configurado: o PIX Dinâmico não está disponível neste caixa.'}</p>
      <Text label="Endereço da API Pix" value={baseUrl} onChange={setBaseUrl} hint="https://, por exemplo https://pix.banco.com.br/api/v2" />
      <Text label="Endereço do token OAuth2" value={tokenUrl} onChange={setTokenUrl} hint="https://, por exemplo https://pix.banco.com.br/oauth/token" />
      <div className="grid-2">
        <Text label="Client id" value={clientId} onChange={setClientId} />
        <Text
          label="Client secret"
          type="password"
          value={clientSecret}
          onChange={setClientSecret}
          hint={view.clientSecretSet ? `Client secret ${CONFIGURED}` : undefined}
        />
      </div>
      <Text label="CNPJ do PSP" value={pspCnpj} onChange={setPspCnpj} hint="Vai no grupo de pagamento da NFC-e (instituição de pagamento)" />
      <fieldset>
        <legend>Certificado do cliente</legend>
        <p className="muted small-text">Certificado atual: {certificateNow}</p>
        <label className="field">
          <span>Formato do certificado</span>
          <select value={certKind} onChange={(e) => setCertKind(e.target.value === 'pem' ? 'pem' : 'pfx')}>
            <option value="pfx">PKCS#12 (.pfx ou .p12) com senha</option>
            <option value="pem">PEM (certificado e chave privada)</option>
          </select>
        </label>
        {certKind === 'pfx' ? (
          <>
            <FilePicker label="Arquivo do certificado PIX (.pfx/.p12)" accept=".pfx,.p12,application/x-pkcs12" file={pfx} onChange={setPfx} />
            <Text label="Senha do certificado PIX" type="password" value={pfxPassword} onChange={setPfxPassword} />
          </>
        ) : (
          <>
            <FilePicker label="Certificado do cliente (PEM)" accept=".pem,.crt,.cer" file={certPem} onChange={setCertPem} />
            <FilePicker label="Chave privada do cliente (PEM)" accept=".pem,.key" file={keyPem} onChange={setKeyPem} />
          </>
        )}
      </fieldset>
      <FilePicker label="Raízes confiáveis do PSP (PEM, opcional)" accept=".pem,.crt,.cer" file={ca} onChange={setCa} />
      {view.caSet && (
        <label className="check">
          <input type="checkbox" checked={removeCa} disabled={ca !== null} onChange={(e) => setRemoveCa(e.target.checked)} />
          <span>Remover as raízes configuradas (usar só as do sistema)</span>
        </label>
      )}
      <Text
        label="Chave PIX da loja (recebedora)"
        value={pixKey}
        onChange={setPixKey}
        hint="CPF ou CNPJ, e-mail, telefone (+55DDDNÚMERO) ou chave aleatória, cadastrada neste PSP. É a mesma do PIX Estático."
      />
      <label className="check">
        <input type="checkbox" checked={printQr} onChange={(e) => setPrintQr(e.target.checked)} />
        <span>Imprimir QR Code PIX para o cliente</span>
      </label>
      <ErrorAlert error={error} />
      {test && (test.ok ? <p role="status">{test.message}</p> : <ErrorAlert error={test.message} />)}
      {saved && <p role="status">PSP salvo.</p>}
      <div className="dialog-actions">
        <button type="button" disabled={busy} onClick={() => void run('test')}>
          Testar conexão
        </button>
        <button type="submit" className="primary" disabled={busy}>
          Salvar PSP
        </button>
      </div>
    </form>
  );
}
