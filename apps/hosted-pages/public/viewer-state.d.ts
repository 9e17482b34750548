// Types of viewer-state.js for the unit tests (the browser runs the .js as it is).
export type Tone = 'neutral' | 'progress' | 'success' | 'danger' | 'warning';
export interface ViewerRecipient {
  id?: string;
  role: string;
  name?: string | null;
  status: string;
  signedAt?: string | null;
  completedAt?: string | null;
  declinedAt?: string | null;
}
export interface ViewerEnvelope {
  status: string;
  title?: string;
  documentAvailable?: boolean;
  recipients?: ViewerRecipient[];
  organizationName?: string;
  logoUrl?: string | null;
}
export declare const ENVELOPE_STATES: Record<string, { label: string; tone: Tone; summary: string; over: boolean }>;
export declare function logoOf(envelope: ViewerEnvelope): { src: string; alt: string } | null;
export declare function envelopeState(status: string): { label: string; tone: Tone; summary: string; over: boolean };
export declare function recipientState(status: string): { label: string; tone: Tone };
export declare function recipientTime(recipient: ViewerRecipient): string | null;
export declare function whoIs(recipient: ViewerRecipient): string;
export declare function progress(envelope: ViewerEnvelope): { signed: number; total: number };
export declare function changes(before: ViewerEnvelope | undefined, after: ViewerEnvelope): string[];
export declare function refreshDelay(expiresAt: string, now?: number): number;
export declare function reconnectDelay(attempt: number, jitter?: number): number;
export declare function refusal(status: number, started: boolean): 'invalid' | 'revoked' | 'failed';
