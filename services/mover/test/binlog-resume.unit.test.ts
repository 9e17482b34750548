import { describe, expect, it } from 'vitest';
import { resumeFile } from '../src/jobs/binlog-stream.ts';

describe('where a new binlog streamer resumes', () => {
  it('at the oldest file after the newest finished one that has only partial uploads, whatever came after it', () => {
    const stored = new Map([['mb.000003', true], ['mb.000004', false], ['mb.000005', false]]);
    expect(resumeFile(stored)).toBe('mb.000004');
  });

  it('after the newest finished file when nothing after it was uploaded, and nowhere when the store is empty', () => {
    expect(resumeFile(new Map([['mb.000002', true], ['mb.000003', true]]))).toBe('mb.000004');
    expect(resumeFile(new Map([['mb.000007', false]]))).toBe('mb.000007');
    expect(resumeFile(new Map())).toBeUndefined();
  });
});
