// The screen's Content-Security-Policy, one for both ways of showing it: the Electron shell
// (balcao://app, events over IPC) and the browser-mode host (events over a WebSocket, whose
// addresses are the only extra connect-src). Only our own files run; nothing inline, no
// plugins, nothing framed, no base or form tricks. Images may be data:/blob: URLs (the receipt
// preview and the QR Code). The page's own meta tag (renderer/index.html) is a looser
// baseline (any loopback WebSocket port); this header is what binds.

export function contentSecurityPolicy(extraConnectSources: readonly string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    `connect-src ${["'self'", ...extraConnectSources].join(' ')}`,
    "img-src 'self' data: blob:",
    "style-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
