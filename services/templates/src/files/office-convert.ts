import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { badFile } from './pdf-inspect.ts';

/** The word-processor types LibreOffice converts, by media type, with the extension it expects. */
export const OFFICE_TYPES: Readonly<Record<string, string>> = {
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/msword': 'doc',
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/rtf': 'rtf',
};

/** The first bytes each type starts with: LibreOffice would read anything else as plain text. */
const MAGIC: Readonly<Record<string, Buffer>> = {
  docx: Buffer.from('PK\x03\x04', 'latin1'),
  odt: Buffer.from('PK\x03\x04', 'latin1'),
  doc: Buffer.from('d0cf11e0a1b11ae1', 'hex'),
  rtf: Buffer.from('{\\rtf', 'latin1'),
};

export interface OfficeConverterOptions {
  /** Conversions at once; each worker has its own LibreOffice profile (two on one profile lose files). */
  workers: number;
  timeoutMs: number;
  /** `soffice` (Debian's libreoffice-writer or -nogui). */
  command?: string;
  /** Where the workers' profiles live; a fresh temporary folder by default. */
  workDir?: string;
}

export interface OfficeConverter {
  /** The PDF of a word-processor file, keeping its layout. */
  toPdf(bytes: Uint8Array, mediaType: string): Promise<Buffer>;
  close(): Promise<void>;
}

/**
 * A bounded pool of headless LibreOffice conversions. A job waits for a free worker; each worker runs one `soffice`
 * at a time with its own user profile; a conversion that outlives `timeoutMs` has its whole process group killed.
 */
export function createOfficeConverter(options: OfficeConverterOptions): OfficeConverter {
  const command = options.command ?? 'soffice';
  const free: number[] = Array.from({ length: options.workers }, (_, i) => i);
  const waiting: Array<(worker: number) => void> = [];
  let root: Promise<string> | undefined;
  const workRoot = () => (root ??= options.workDir ? mkdir(options.workDir, { recursive: true }).then(() => options.workDir as string) : mkdtemp(path.join(tmpdir(), 'office-')));

  const acquire = (): Promise<number> => {
    const worker = free.pop();
    return worker !== undefined ? Promise.resolve(worker) : new Promise((resolve) => waiting.push(resolve));
  };
  const release = (worker: number): void => {
    const next = waiting.shift();
    if (next) next(worker);
    else free.push(worker);
  };

  async function convertOn(worker: number, bytes: Uint8Array, extension: string): Promise<Buffer> {
    const base = await workRoot();
    const job = await mkdtemp(path.join(base, `job-${worker}-`));
    try {
      const input = path.join(job, `document.${extension}`);
      await writeFile(input, bytes);
      const profile = pathToFileURL(path.join(base, `profile-${worker}`)).href;
      await run(command, [`-env:UserInstallation=${profile}`, '--headless', '--norestore', '--nolockcheck', '--convert-to', 'pdf', '--outdir', job, input], options.timeoutMs);
      const pdf = (await readdir(job)).find((name) => name.endsWith('.pdf'));
      if (!pdf) throw badFile('The file could not be converted to PDF: LibreOffice did not read it as a document.');
      return await readFile(path.join(job, pdf));
    } finally {
      await rm(job, { recursive: true, force: true });
    }
  }

  return {
    async toPdf(bytes, mediaType) {
      const extension = OFFICE_TYPES[mediaType];
      if (!extension) throw new Error(`not a word-processor type: ${mediaType}`);
      if (!Buffer.from(bytes.subarray(0, 8)).subarray(0, MAGIC[extension]!.length).equals(MAGIC[extension]!)) {
        throw badFile(`The file is not a ${extension.toUpperCase()} document, as its content type (${mediaType}) says.`);
      }
      const worker = await acquire();
      try {
        return await convertOn(worker, bytes, extension);
      } finally {
        release(worker);
      }
    },
    async close() {
      if (root && !options.workDir) await rm(await root, { recursive: true, force: true });
    },
  };
}

/** Runs a command in its own process group; past the timeout the whole group (soffice forks) is killed. */
function run(command: string, args: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${command}: ${error.message} (install libreoffice-writer)`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) reject(badFile(`The conversion to PDF took longer than ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`} and was stopped.`));
      else if (code !== 0) reject(badFile(`The file could not be converted to PDF (LibreOffice exited with ${code}${stderr.trim() ? `: ${stderr.trim().split('\n').at(-1)}` : ''}).`));
      else resolve();
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
