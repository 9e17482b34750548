import { describe, expect, it } from 'vitest';
import { placeRefusal } from '../src/pages/restores/refusal.ts';

describe('where a refusal is shown', () => {
  it('puts a 400 beside the field its words name', () => {
    expect(placeRefusal(400, 'ttl: "4 hours" is not a duration', 'open a sandbox')).toEqual({ field: 'ttl', detail: '"4 hours" is not a duration' });
    expect(placeRefusal(400, 'body.port: must be <= 65535', 'restore')).toEqual({ field: 'port', detail: 'must be <= 65535' });
    expect(placeRefusal(400, 'body.tables.0: must NOT have fewer than 1 characters', 'restore')).toEqual({ field: 'tables', detail: 'must NOT have fewer than 1 characters' });
    expect(placeRefusal(400, 'confirm: must equal the target name postgres for an in-place restore', 'restore in place')).toEqual({ field: 'confirm', detail: 'must equal the target name postgres for an in-place restore' });
    expect(placeRefusal(400, 'The request is not valid.', 'restore')).toEqual({ detail: 'The request is not valid.' });
    expect(placeRefusal(400, 'body.nonsense: is not allowed', 'restore')).toEqual({ detail: 'body.nonsense: is not allowed' });
  });

  it('puts a 422 beside the moment, unless it is about the tables or the database', () => {
    expect(placeRefusal(422, '2026-11-28T12:30:00.000Z lies outside every change-capture window', 'restore').field).toBe('at');
    expect(placeRefusal(422, 'A table-level restore of MariaDB/MySQL to a moment of the window is not available', 'restore').field).toBe('tables');
    expect(placeRefusal(422, 'The backup holds no database shop; it holds app.', 'download').field).toBe('database');
  });

  it('says a 403 as what the role cannot do', () => {
    expect(placeRefusal(403, 'An in-place restore needs the role restorer-admin; you are restorer.', 'restore in place')).toEqual({ detail: 'Your role cannot restore in place. An in-place restore needs the role restorer-admin; you are restorer.' });
  });

  it('leaves anything else above the button', () => {
    expect(placeRefusal(409, 'Restore x already exists.', 'restore')).toEqual({ detail: 'Restore x already exists.' });
  });
});
