import { describe, expect, it } from 'vitest';
import { missingTools, SERVICE_TOOLS } from '../src/tools.ts';

describe('the tools the services call', () => {
  it('are all found on a bootstrapped machine', () => {
    expect(missingTools()).toEqual([]);
  });

  it('are each named, with what fails and the package to install, when missing', () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const problems = missingTools();
      expect(problems).toHaveLength(SERVICE_TOOLS.length);
      expect(problems[0]).toBe('soffice is missing (converting DOCX, DOC, ODT and RTF template files to PDF will fail): install the Debian package libreoffice-writer-nogui, or run bash scripts/bootstrap.sh');
    } finally {
      process.env.PATH = path;
    }
  });
});
