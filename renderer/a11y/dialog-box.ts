// The open modal dialog's element, for what must live inside it while it is open (the live
// regions). One dialog at a time (state/ui-store.ts).

import { create } from 'zustand';

export const useDialogBox = create<{ box: HTMLElement | null }>(() => ({ box: null }));
