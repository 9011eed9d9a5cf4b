// A 15–255 character justification (cancellation, void, return reason) with its counter, so
// the manager sees why "Confirmar" is still disabled.

export const JUSTIFICATION_MIN = 15;
export const JUSTIFICATION_MAX = 255;

export function justificationOk(text: string): boolean {
  const n = text.trim().length;
  return n >= JUSTIFICATION_MIN && n <= JUSTIFICATION_MAX;
}

export function JustificationField(props: { label: string; value: string; onChange: (v: string) => void }) {
  const { label, value, onChange } = props;
  const n = value.trim().length;
  const hint =
    n < JUSTIFICATION_MIN ? `faltam ${JUSTIFICATION_MIN - n} caracteres` : n > JUSTIFICATION_MAX ? `${n - JUSTIFICATION_MAX} caracteres a mais` : 'ok';
  return (
    <label className="field">
      <span>{label}</span>
      <textarea rows={3} maxLength={JUSTIFICATION_MAX + 50} value={value} onChange={(e) => onChange(e.target.value)} />
      <span className={n >= JUSTIFICATION_MIN && n <= JUSTIFICATION_MAX ? 'counter' : 'counter warn'} aria-live="polite">
        {n}/{JUSTIFICATION_MAX} (mínimo {JUSTIFICATION_MIN}) — {hint}
      </span>
    </label>
  );
}
