// Files the screen hands to the manager as downloads (a report's CSV, a closing's PDF, an
// export in browser mode): an object URL and a click on a link with `download`, the way a page
// saves a file; the browser (or Electron) decides where, asking when it is set to ask.

export function downloadBlob(fileName: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked later: the download reads the blob after the click returns.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function downloadText(fileName: string, text: string, type: string): void {
  downloadBlob(fileName, new Blob([text], { type }));
}

export function downloadBase64(fileName: string, base64: string, type: string): void {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  downloadBlob(fileName, new Blob([bytes], { type }));
}
