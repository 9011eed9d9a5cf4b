// Configurações → Balança: how the store's scales print their EAN-13 labels, so the checkout
// reads the product, the weight and the total from them (electron/core/scale-label.ts).

import { useState } from 'react';
import type { ManagerAuthorization, ScaleLabelSettings, TerminalSettings } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { settingsSaved } from '../state/settings-store.ts';
import { terminal } from '../state/terminal.ts';

const CODE_LENGTHS: ScaleLabelSettings['codeLength'][] = [4, 5, 6];
const VALUE_LENGTHS: ScaleLabelSettings['valueLength'][] = [5, 6];

/** The label's digits as the manager reads them on the scale's manual: "2 CCCC 0 TTTTTT D". */
export function labelPattern(s: ScaleLabelSettings): string {
  const zeros = 11 - s.codeLength - s.valueLength;
  const value = (s.content === 'price' ? 'T' : 'P').repeat(s.valueLength);
  return ['2', 'C'.repeat(s.codeLength), ...(zeros > 0 ? ['0'.repeat(zeros)] : []), value, 'D'].join(' ');
}

function valueExample(s: ScaleLabelSettings): string {
  const digits = '2345'.padStart(s.valueLength, '0');
  const int = digits.slice(0, digits.length - s.decimals).replace(/^0+(?=.)/, '');
  const frac = s.decimals ? `,${digits.slice(digits.length - s.decimals)}` : '';
  return s.content === 'price' ? `${digits} = R$ ${int}${frac}` : `${digits} = ${int}${frac} kg`;
}

export function ScaleLabelsSection({ settings, auth }: { settings: TerminalSettings; auth: ManagerAuthorization }) {
  const [s, setS] = useState<ScaleLabelSettings>(settings.scaleLabels);
  const [error, setError] = useState<TerminalFailure | null>(null);
  const [saved, setSaved] = useState(false);
  const maxDecimals = s.content === 'price' ? 2 : 4;
  const fits = s.codeLength + s.valueLength <= 11;
  const save = async () => {
    setError(null);
    setSaved(false);
    try {
      settingsSaved(await terminal().updateSettings({ scaleLabels: s }, auth));
      setSaved(true);
    } catch (err) {
      setError(asFailure(err));
    }
  };
  const number = (label: string, value: number, options: number[], onChange: (v: number) => void) => (
    <label className="field">
      <span>{label}</span>
      <select value={value} onChange={(e) => onChange(Number(e.target.value))}>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <form
      className="settings-section"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <h3>Etiquetas de balança</h3>
      <p className="muted small-text">
        Etiquetas EAN-13 que começam com 2, impressas pela balança (Toledo, Filizola e outras): o código do produto e o preço total ou o peso. O formato deve
        ser o mesmo configurado na balança.
      </p>
      <label className="check">
        <input type="checkbox" checked={s.enabled} onChange={(e) => setS({ ...s, enabled: e.target.checked })} />
        <span>Ler etiquetas de balança no caixa</span>
      </label>
      <div className="grid-2">
        {number('Dígitos do código do produto', s.codeLength, CODE_LENGTHS, (codeLength) =>
          setS({ ...s, codeLength: codeLength as ScaleLabelSettings['codeLength'] }),
        )}
        {number('Dígitos do valor', s.valueLength, VALUE_LENGTHS, (valueLength) =>
          setS({ ...s, valueLength: valueLength as ScaleLabelSettings['valueLength'] }),
        )}
        <label className="field">
          <span>A etiqueta traz</span>
          <select
            value={s.content}
            onChange={(e) => {
              const content = e.target.value === 'weight' ? 'weight' : 'price';
              setS({ ...s, content, decimals: content === 'price' ? 2 : 3 });
            }}
          >
            <option value="price">Preço total</option>
            <option value="weight">Peso (kg)</option>
          </select>
        </label>
        {number(
          'Casas decimais do valor',
          Math.min(s.decimals, maxDecimals),
          Array.from({ length: maxDecimals + 1 }, (_, i) => i),
          (decimals) => setS({ ...s, decimals }),
        )}
      </div>
      {fits ? (
        <p className="muted small-text" aria-live="polite">
          Formato: {labelPattern(s)} (C: código do produto; {s.content === 'price' ? 'T: preço total' : 'P: peso'}, ex.: {valueExample(s)}; D: dígito
          verificador)
        </p>
      ) : (
        <p className="muted small-text">Código e valor somam no máximo 11 dígitos: com código de 6 dígitos, o valor tem 5.</p>
      )}
      <ErrorAlert error={error} />
      {saved && <p role="status">Salvo.</p>}
      <button type="submit">Salvar balança</button>
    </form>
  );
}
