// A QR Code drawn as one SVG path from the encoder's module matrix (the `qrcode` package): no
// image URL, nothing the content security policy must allow, sharp at any zoom.

import QRCode from 'qrcode';
import { useMemo } from 'react';

export function QrCode(props: { text: string; label: string; size?: string }) {
  const { text, label } = props;
  const { size, path } = useMemo(() => {
    // Level M, as payment QR Codes are printed; the quiet zone is the 4 modules the standard asks.
    const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
    const d: string[] = [];
    for (let y = 0; y < modules.size; y++) {
      for (let x = 0; x < modules.size; x++) if (modules.get(x, y)) d.push(`M${x + 4} ${y + 4}h1v1h-1z`);
    }
    return { size: modules.size + 8, path: d.join('') };
  }, [text]);
  return (
    <svg
      className="qr-code"
      role="img"
      aria-label={label}
      viewBox={`0 0 ${size} ${size}`}
      width={props.size ?? '18rem'}
      height={props.size ?? '18rem'}
      shapeRendering="crispEdges"
    >
      <rect width={size} height={size} fill="#fff" />
      <path d={path} fill="#000" />
    </svg>
  );
}
