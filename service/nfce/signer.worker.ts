// The signing thread of the NFC-e queue (signer.ts): builds and signs one NFC-e per message with
// the fiscal core, off the event loop that answers HTTP.

import { parentPort } from 'node:worker_threads';
import { FieldError } from '../../fiscal/errors.ts';
import { issueNfce } from '../../fiscal/nfce/build.ts';
import type { NfceRequest } from '../../fiscal/nfce/types.ts';
import type { SignTask, SignResult } from './signer.ts';

const port = parentPort!;

port.on('message', (task: SignTask) => {
  let result: SignResult;
  try {
    const issued = issueNfce(JSON.parse(task.requestJson) as NfceRequest, task.context);
    result = { id: task.id, ok: true, key: issued.key, xml: issued.xml, qrCode: issued.qrCode };
  } catch (err) {
    result =
      err instanceof FieldError
        ? { id: task.id, ok: false, issues: err.issues }
        : { id: task.id, ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(result);
});

port.postMessage({ ready: true });
