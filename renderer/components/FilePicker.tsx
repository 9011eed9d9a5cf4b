// A file field that speaks Portuguese: the browser's own button is labelled in the browser's
// language ("Choose File"), so it stays hidden behind one of ours; the input keeps its label.

import { useId, useRef } from 'react';

export function FilePicker(props: { label: string; accept: string; file: File | null; onChange: (file: File | null) => void }) {
  const { label, accept, file, onChange } = props;
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} ref={input} className="sr-only" type="file" tabIndex={-1} accept={accept} onChange={(e) => onChange(e.target.files?.[0] ?? null)} />
      <div className="file-row">
        <button type="button" onClick={() => input.current?.click()}>
          Escolher arquivo
        </button>
        <span className={file ? undefined : 'muted'}>{file ? file.name : 'Nenhum arquivo escolhido'}</span>
      </div>
    </div>
  );
}
