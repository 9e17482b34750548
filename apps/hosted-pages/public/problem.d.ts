// Types of problem.js for the unit tests (the browser runs the .js as it is).
export interface Problem {
  type?: string;
  detail?: string;
  errors?: Array<{ pointer: string; detail: string }>;
  [member: string]: unknown;
}
export declare class ApiError extends Error {
  constructor(status: number, problem?: Problem, retryAfter?: number);
  readonly status: number;
  readonly problem: Problem;
  readonly retryAfter: number | undefined;
  get slug(): string;
}
export declare function retryAfterSeconds(value: string | null | undefined, now?: number): number | undefined;
export declare function waitText(seconds: number): string;
export declare function request(method: string, path: string, options?: { body?: unknown; token?: string; raw?: boolean }): Promise<unknown>;
