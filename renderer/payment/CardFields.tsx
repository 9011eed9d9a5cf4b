// The card group's fields: integration kind, acquirer CNPJ, brand, authorization code.

import type { CardForm } from './payment-methods.ts';
import { BRANDS } from './payment-methods.ts';

export function CardFields(props: { value: CardForm; onChange: (v: CardForm) => void; showBrand: boolean }) {
  const { value, onChange, showBrand } = props;
  const required = value.tpIntegra === '1';
  return (
    <fieldset className="card-fields">
      <legend>Dados da operação</legend>
      <div className="choices" role="radiogroup" aria-label="Integração">
        <label className="choice">
          <input type="radio" name="tpIntegra" checked={value.tpIntegra === '2'} onChange={() => onChange({ ...value, tpIntegra: '2' })} />
          Maquininha não integrada
        </label>
        <label className="choice">
          <input type="radio" name="tpIntegra" checked={value.tpIntegra === '1'} onChange={() => onChange({ ...value, tpIntegra: '1' })} />
          TEF integrado
        </label>
      </div>
      <div className="row">
        <label className="field">
          <span>CNPJ da credenciadora{required ? ' (obrigatório)' : ' (opcional)'}</span>
          <input
            autoCapitalize="characters"
            spellCheck={false}
            autoComplete="off"
            value={value.cnpj}
            onChange={(e) => onChange({ ...value, cnpj: e.target.value })}
          />
        </label>
        {showBrand && (
          <label className="field">
            <span>Bandeira (opcional)</span>
            <select value={value.tBand} onChange={(e) => onChange({ ...value, tBand: e.target.value })}>
              <option value="">Não informar</option>
              {BRANDS.map((b) => (
                <option key={b.code} value={b.code}>
                  {b.code} {b.label}
                </option>
              ))}
            </select>
          </label>
        )}
        <label className="field">
          <span>Código de autorização{required ? ' (obrigatório)' : ' (opcional)'}</span>
          <input autoComplete="off" value={value.cAut} onChange={(e) => onChange({ ...value, cAut: e.target.value })} />
        </label>
      </div>
    </fieldset>
  );
}
