// The DANFE as the printer gets it, drawn from the core's SVG. Shown as an <img> from a blob URL:
// the SVG is never put into the page as HTML, so nothing in it can run or restyle the screen.
// The receipt is long (QR Code at the bottom) and scrolls in its own box, which therefore takes
// the focus: the arrows and Page Down scroll it from the keyboard.

import { useEffect, useState } from 'react';
import type { ReceiptView } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { ErrorAlert } from '../components/ErrorAlert.tsx';
import { terminal } from '../state/terminal.ts';

type Loaded = { key: string; url: string | null; error: TerminalFailure | null };

function ReceiptPreviewImage(props: { receipt: ReceiptView }) {
  const { receipt } = props;
  // What the preview shows changes with the state (protocol, cancellation stamp): reload on it.
  const key = `${receipt.id}:${receipt.state}`;
  const [loaded, setLoaded] = useState<Loaded | null>(null);

  useEffect(() => {
    let url: string | null = null;
    let live = true;
    terminal()
      .receiptPreview(receipt.id)
      .then(
        (preview) => {
          if (!live) return;
          url = URL.createObjectURL(new Blob([preview.svg], { type: 'image/svg+xml' }));
          setLoaded({ key, url, error: null });
        },
        (err: unknown) => live && setLoaded({ key, url: null, error: asFailure(err) }),
      );
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [key, receipt.id]);

  if (!loaded || loaded.key !== key) return <p className="muted">Carregando a pré-visualização…</p>;
  if (loaded.error) return <ErrorAlert error={`Pré-visualização do DANFE indisponível: ${loaded.error.message}`} />;
  return <img className="danfe" src={loaded.url!} alt={`DANFE NFC-e nº ${receipt.nNF}`} />;
}

/** The preview's scrolling box; `placeholder` stands in while the receipt has no DANFE to show. */
export function ReceiptPreview(props: { receipt: ReceiptView; placeholder?: string | null }) {
  const { receipt, placeholder } = props;
  return (
    <div className="receipt-preview" role="region" aria-label="Pré-visualização do DANFE" tabIndex={0}>
      {placeholder ? <p className="muted">{placeholder}</p> : <ReceiptPreviewImage receipt={receipt} />}
    </div>
  );
}
