// F10: the manager's screen. The PIN is asked first; the core checks it with each save (there
// is no separate "log in"), so a wrong PIN shows up as the save's error.

import { useEffect, useState } from 'react';
import type { ManagerAuthorization } from '../../electron/api/terminal-api.ts';
import { Dialog } from '../components/Dialog.tsx';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { Tabs } from '../components/Tabs.tsx';
import { emptyAuthorization, ManagerFields } from '../components/ManagerFields.tsx';
import { loadSettings, useSettings } from '../state/settings-store.ts';
import { useStatus } from '../state/status-store.ts';
import { closeDialog } from '../state/ui-store.ts';
import { ExportSection } from '../reports/ExportSection.tsx';
import { ReportsSection } from '../reports/ReportsSection.tsx';
import { IbptSection } from './IbptSection.tsx';
import { PaidPixSection } from './PaidPixSection.tsx';
import { PspSection } from './PspSection.tsx';
import { ScaleLabelsSection } from './ScaleLabelsSection.tsx';
import {
  CashSection,
  CatalogSection,
  CertificateSection,
  CompanySection,
  ContingencySection,
  PrinterSection,
  PixSection,
  RetentionSection,
  ServiceSection,
} from './SettingsSections.tsx';

const TABS = [
  { id: 'servico', label: 'Serviço' },
  { id: 'impressora', label: 'Impressora' },
  { id: 'balanca', label: 'Balança' },
  { id: 'empresa', label: 'Empresa' },
  { id: 'contingencia', label: 'Contingência' },
  { id: 'certificado', label: 'Certificado' },
  { id: 'catalogo', label: 'Catálogo' },
  { id: 'ibpt', label: 'Tabela IBPT' },
  { id: 'caixa', label: 'Caixa' },
  { id: 'pix', label: 'PIX (PSP)' },
  { id: 'pixpagos', label: 'PIX pagos sem venda' },
  { id: 'retencao', label: 'Retenção' },
  { id: 'relatorios', label: 'Relatórios' },
  { id: 'exportacao', label: 'Exportação' },
] as const;

type Tab = (typeof TABS)[number]['id'];

const NEEDS_SETTINGS: ReadonlySet<Tab> = new Set<Tab>(['servico', 'impressora', 'balanca', 'empresa', 'contingencia', 'caixa', 'retencao']);

export function SettingsDialog() {
  const [auth, setAuth] = useState<ManagerAuthorization>(emptyAuthorization);
  const [entered, setEntered] = useState(false);
  const [tab, setTab] = useState<Tab>('servico');
  const settings = useSettings((s) => s.settings);
  const settingsError = useSettings((s) => s.settingsError);
  const contingency = useStatus((s) => s.queue?.contingency ?? null);

  useEffect(() => {
    if (entered) void loadSettings();
  }, [entered]);

  return (
    <Dialog title="Gerente: configurações" onClose={closeDialog} wide>
      {!entered ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setEntered(true);
          }}
        >
          <ManagerFields value={auth} onChange={setAuth} focusPin />
          <div className="dialog-actions">
            <button type="submit" className="primary" disabled={!auth.managerId || !auth.pin}>
              Continuar
            </button>
          </div>
        </form>
      ) : (
        <div className="settings">
          <p className="muted">
            Cada alteração é confirmada com o PIN informado.{' '}
            <button type="button" className="small" onClick={() => setEntered(false)}>
              Trocar gerente ou PIN
            </button>
          </p>
          <Tabs label="Seções das configurações" tabs={TABS} selected={tab} onSelect={setTab}>
            {NEEDS_SETTINGS.has(tab) && settingsError && <ErrorAlert error={`Não foi possível carregar as configurações: ${settingsError.message}`} />}
            {NEEDS_SETTINGS.has(tab) && !settings && !settingsError && <p className="muted">Carregando…</p>}
            {settings && tab === 'servico' && <ServiceSection settings={settings} auth={auth} />}
            {settings && tab === 'impressora' && <PrinterSection settings={settings} auth={auth} />}
            {settings && tab === 'balanca' && <ScaleLabelsSection settings={settings} auth={auth} />}
            {settings && tab === 'empresa' && <CompanySection settings={settings} auth={auth} />}
            {settings && tab === 'contingencia' && <ContingencySection settings={settings} auth={auth} status={contingency} />}
            {tab === 'certificado' && <CertificateSection key={settings ? 'loaded' : 'none'} certificate={settings?.certificate ?? null} auth={auth} />}
            {tab === 'catalogo' && <CatalogSection auth={auth} />}
            {tab === 'ibpt' && <IbptSection auth={auth} />}
            {settings && tab === 'caixa' && (
              <>
                <CashSection settings={settings} auth={auth} />
                <PixSection settings={settings} auth={auth} />
              </>
            )}
            {tab === 'pix' && <PspSection auth={auth} />}
            {tab === 'pixpagos' && <PaidPixSection auth={auth} />}
            {settings && tab === 'retencao' && <RetentionSection settings={settings} auth={auth} />}
            {tab === 'relatorios' && <ReportsSection auth={auth} />}
            {tab === 'exportacao' && <ExportSection auth={auth} />}
          </Tabs>
        </div>
      )}
    </Dialog>
  );
}
