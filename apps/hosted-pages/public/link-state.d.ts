// Types of link-state.js for the unit tests (the browser runs the .js as it is).
import type { ApiError } from './problem.js';

export interface LinkField {
  type: string;
  required?: boolean;
  label?: string | null;
}
export declare function fieldLines(fields?: LinkField[]): string[];
export declare function webImage(url: unknown): string | null;
export declare function linkView(link: Record<string, unknown>): { title: string; organization: string; logoUrl: string | null; paused: boolean; testMode: boolean; lines: string[] };
export declare function placeOf(error: ApiError, step: 'details' | 'code'): 'name' | 'email' | 'code' | 'form';
export declare function pageStateOf(error: ApiError): 'gone' | 'paused' | undefined;
export declare function mustStartAgain(error: ApiError): boolean;
export declare function messageOf(error: ApiError, now?: number): string;
