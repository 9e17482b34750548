/**
 * Request parameters as the SDK encodes them: form bodies and query strings with brackets (`a[b][0][c]=...`), read with
 * `qs`, and small readers that answer the API's own 400s for a missing or malformed parameter.
 */
import qs from 'qs';
import { invalidParam, missingParam } from './api-errors.ts';
import type { Metadata } from './objects.ts';

/** A parsed parameter tree: strings at the leaves (the wire has no other type), arrays and objects above. */
export type Params = { [key: string]: ParamValue };
export type ParamValue = string | ParamValue[] | Params | undefined;

const PARSE_OPTIONS = { depth: 8, arrayLimit: 200, parameterLimit: 2_000, allowPrototypes: false, plainObjects: true } as const;

export function parseForm(text: string): Params {
  return qs.parse(text, PARSE_OPTIONS) as Params;
}

export function optionalString(params: Params, name: string): string | undefined {
  const value = params[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidParam(name, `Invalid string: ${name} must be a string.`);
  return value;
}

export function requiredString(params: Params, name: string): string {
  const value = optionalString(params, name);
  if (value === undefined || value === '') throw missingParam(name);
  return value;
}

export function optionalBoolean(params: Params, name: string): boolean | undefined {
  const value = optionalString(params, name);
  if (value === undefined) return undefined;
  if (value !== 'true' && value !== 'false') throw invalidParam(name, `Invalid boolean: ${value}`);
  return value === 'true';
}

export function optionalInteger(params: Params, name: string): number | undefined {
  const value = optionalString(params, name);
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value)) throw invalidParam(name, `Invalid integer: ${value}`);
  return Number(value);
}

export function requiredInteger(params: Params, name: string): number {
  const value = optionalInteger(params, name);
  if (value === undefined) throw missingParam(name);
  return value;
}

/** Objects given as an array (`items[0][price]=...`): qs makes an object of sparse or many indices, so both are read. */
export function objectList(params: Params, name: string): Params[] {
  const value = params[name];
  if (value === undefined) return [];
  const entries = Array.isArray(value) ? value : typeof value === 'object' ? Object.values(value) : undefined;
  if (!entries || entries.some((entry) => typeof entry !== 'object' || entry === null || Array.isArray(entry))) throw invalidParam(name, `Invalid array: ${name} must be a list of objects.`);
  return entries as Params[];
}

export function stringList(params: Params, name: string): string[] {
  const value = params[name];
  if (value === undefined) return [];
  const entries = Array.isArray(value) ? value : typeof value === 'object' ? Object.values(value) : [value];
  if (entries.some((entry) => typeof entry !== 'string')) throw invalidParam(name, `Invalid array: ${name} must be a list of strings.`);
  return entries as string[];
}

export function nestedParams(params: Params, name: string): Params {
  const value = params[name];
  if (value === undefined || value === '') return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidParam(name, `Invalid object: ${name} must be an object.`);
  return value;
}

/**
 * Metadata merged as the API merges it: each given key replaces the old value, an empty value removes the key, and an
 * empty `metadata` (`metadata=`) clears them all.
 */
export function mergeMetadata(current: Metadata, params: Params, name = 'metadata'): Metadata {
  if (params[name] === '') return {};
  const merged = { ...current };
  for (const [key, value] of Object.entries(nestedParams(params, name))) {
    if (typeof value !== 'string') throw invalidParam(`${name}[${key}]`, 'Invalid metadata: values must be strings.');
    if (key.length > 40 || value.length > 500) throw invalidParam(`${name}[${key}]`, 'Metadata keys are at most 40 characters and values at most 500.');
    if (value === '') delete merged[key];
    else merged[key] = value;
  }
  return merged;
}

/** An http(s) address (a `{CHECKOUT_SESSION_ID}` template in it is allowed), or undefined when absent. */
export function optionalUrl(params: Params, name: string): string | undefined {
  const value = optionalString(params, name);
  if (value === undefined) return undefined;
  const candidate = value.replaceAll('{CHECKOUT_SESSION_ID}', 'cs_id');
  if (!URL.canParse(candidate) || !/^https?:$/.test(new URL(candidate).protocol)) throw invalidParam(name, 'Not a valid URL');
  return value;
}

export function requiredUrl(params: Params, name: string): string {
  const value = optionalUrl(params, name);
  if (value === undefined || value === '') throw missingParam(name);
  return value;
}
