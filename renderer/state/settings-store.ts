// Settings and managers, loaded when the manager screens open. The manager's authorization is
// kept only while the settings dialog is open (never stored).

import { create } from 'zustand';
import type { ManagerView, TerminalSettings } from '../../electron/api/terminal-api.ts';
import { asFailure, type TerminalFailure } from '../api/terminal-failure.ts';
import { terminal } from './terminal.ts';

type SettingsState = {
  settings: TerminalSettings | null;
  settingsError: TerminalFailure | null;
  managers: ManagerView[];
  managersError: TerminalFailure | null;
};

export const useSettings = create<SettingsState>(() => ({ settings: null, settingsError: null, managers: [], managersError: null }));

export async function loadSettings(): Promise<void> {
  try {
    useSettings.setState({ settings: await terminal().getSettings(), settingsError: null });
  } catch (err) {
    useSettings.setState({ settingsError: asFailure(err) });
  }
}

export function settingsSaved(settings: TerminalSettings): void {
  useSettings.setState({ settings, settingsError: null });
}

export async function loadManagers(): Promise<void> {
  try {
    useSettings.setState({ managers: await terminal().listManagers(), managersError: null });
  } catch (err) {
    useSettings.setState({ managersError: asFailure(err) });
  }
}
