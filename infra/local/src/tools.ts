import { spawnSync } from 'node:child_process';

/**
 * The programs the services call, each found by a shell test (a command on the PATH by default), with the Debian
 * package that brings it (scripts/bootstrap.sh installs them).
 */
export const SERVICE_TOOLS = [
  { command: 'soffice', package: 'libreoffice-writer-nogui', for: 'converting DOCX, DOC, ODT and RTF template files to PDF' },
  // LibreOffice's UNO bridge for Debian's own Python: the templates service converts through a running LibreOffice with it.
  { command: 'python3-uno', test: `/usr/bin/python3 -c 'import uno'`, package: 'python3-uno', for: 'converting DOCX, DOC, ODT and RTF template files to PDF' },
  { command: 'chromium', package: 'chromium', for: 'printing document-mode templates to PDF' },
  { command: 'pdftotext', package: 'poppler-utils', for: 'placing fields of document-mode templates' },
  { command: 'pg_dump', package: 'postgresql-client', for: 'Strata backups of Postgres' },
  { command: 'mariadb-dump', package: 'mariadb-client', for: 'Strata backups of MySQL and MariaDB' },
] as const;

/** The tools missing on this machine, each as a sentence saying what will not work and what to install. */
export function missingTools(): string[] {
  const present = (tool: (typeof SERVICE_TOOLS)[number]) => spawnSync('sh', ['-c', 'test' in tool ? tool.test : `command -v ${tool.command}`], { stdio: 'ignore' }).status === 0;
  return SERVICE_TOOLS.filter((tool) => !present(tool)).map(
    (tool) => `${tool.command} is missing (${tool.for} will fail): install the Debian package ${tool.package}, or run bash scripts/bootstrap.sh`,
  );
}
