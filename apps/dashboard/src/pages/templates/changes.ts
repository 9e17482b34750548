import { useEffect, useRef } from 'react';
import { useLive } from '../../api/live.ts';
import type { Mode } from '../../api/mode.ts';

/**
 * How the templates pages learn that a template changed, from the quickest to the slowest:
 *
 * 1. `/app/live` (useLive): `template.created` and `template.deleted`, the only template domain events there are
 *    (proto/events). They carry no mode, so they count in both.
 * 2. This browser's other tabs: saving a draft, uploading a file and publishing emit no domain event, so every
 *    template write this dashboard makes is told to its other tabs on a BroadcastChannel (`notifyTemplateChanged`).
 * 3. The same writes made elsewhere (the API, another person's browser) reach nothing but a read: every 15 s while
 *    the page is visible, and at once when it becomes visible again. This goes when the templates service publishes
 *    events for drafts and versions.
 */
const CHANNEL = 'sigil-templates';
export const POLL_MS = 15_000;

interface TemplateChange {
  templateId: string;
  mode: Mode;
}

let channel: BroadcastChannel | undefined;
const channelOf = (): BroadcastChannel | undefined => (channel ??= typeof BroadcastChannel === 'function' ? new BroadcastChannel(CHANNEL) : undefined);

/** Tells this browser's other tabs that a template changed (a tab never hears its own message). */
export function notifyTemplateChanged(templateId: string, mode: Mode): void {
  channelOf()?.postMessage({ templateId, mode } satisfies TemplateChange);
}

/**
 * Calls `onChange` when a template of `mode` (only `templateId` when given) may have changed; the page refetches its
 * query with `requestPolicy: 'network-only'`. An unsaved edit is the editor's to keep (useDraft).
 */
export function useTemplateChanges(onChange: () => void, { mode, templateId }: { mode: Mode; templateId?: string }): void {
  const latest = useRef({ onChange, mode, templateId });
  latest.current = { onChange, mode, templateId };

  useLive(() => latest.current.onChange(), { mode, types: ['template.'], filter: (change) => !templateId || change.ids.templateId === templateId });

  useEffect(() => {
    const tabs = channelOf();
    const fromTab = ({ data }: MessageEvent<TemplateChange>) => {
      const { mode: current, templateId: watched, onChange: call } = latest.current;
      if (data.mode === current && (!watched || data.templateId === watched)) call();
    };
    tabs?.addEventListener('message', fromTab);
    const visible = () => document.visibilityState === 'visible';
    const timer = setInterval(() => visible() && latest.current.onChange(), POLL_MS);
    const onVisible = () => visible() && latest.current.onChange();
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      tabs?.removeEventListener('message', fromTab);
      clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, []);
}
