import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startListener, type Listener } from './office-listener.ts';
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
  /** Conversions at once; each worker has its own LibreOffice and profile (two on one profile lose files). */
  workers: number;
  /** How long one conversion may take; a worker's LibreOffice starting for it is not counted. */
  timeoutMs: number;
  /** How long a worker's LibreOffice may take to start answering (60 s by default). */
  startTimeoutMs?: number;
  /** `soffice` (Debian's libreoffice-writer or -nogui). */
  command?: string;
  /** The Python that has Debian's python3-uno (`/usr/bin/python3`; another Python on the PATH may lack it). */
  python?: string;
  /** Where the workers' profiles live; a fresh temporary folder by default. */
  workDir?: string;
}

export interface OfficeConverter {
  /** The PDF of a word-processor file, keeping its layout. */
  toPdf(bytes: Uint8Array, mediaType: string): Promise<Buffer>;
  /** Stops every worker's LibreOffice. */
  close(): Promise<void>;
}

interface Worker {
  index: number;
  listener?: Listener;
}

/**
 * A bounded pool of headless LibreOffice conversions. A job waits for a free worker. Each worker keeps one LibreOffice
 * running as a listener on its own profile, started by its first job and again by the next job after it died; a
 * conversion that outlives `timeoutMs` has that listener's whole process group killed.
 */
export function createOfficeConverter(options: OfficeConverterOptions): OfficeConverter {
  const workers: Worker[] = Array.from({ length: options.workers }, (_, index) => ({ index }));
  const free = [...workers];
  const waiting: Array<(worker: Worker) => void> = [];
  const pipePrefix = `sigil-office-${process.pid}-${randomBytes(4).toString('hex')}`;
  let closed = false;
  let root: Promise<string> | undefined;
  const workRoot = () => (root ??= options.workDir ? mkdir(options.workDir, { recursive: true }).then(() => options.workDir as string) : mkdtemp(path.join(tmpdir(), 'office-')));
  // A process that exits without close() must not leave LibreOffice behind.
  const killAll = () => workers.forEach((worker) => worker.listener?.kill());
  let guarding = false;

  const acquire = (): Promise<Worker> => {
    const worker = free.pop();
    return worker ? Promise.resolve(worker) : new Promise((resolve) => waiting.push(resolve));
  };
  const release = (worker: Worker): void => {
    const next = waiting.shift();
    if (next) next(worker);
    else free.push(worker);
  };

  async function listenerOf(worker: Worker): Promise<Listener> {
    if (worker.listener?.running) return worker.listener;
    const base = await workRoot();
    const profile = path.join(base, `profile-${worker.index}`);
    // A LibreOffice that died or was killed (a hung conversion) may have left its profile locked or half written:
    // the one replacing it starts on a new profile.
    if (worker.listener) await rm(profile, { recursive: true, force: true });
    const listener = await startListener({
      command: options.command ?? 'soffice',
      python: options.python ?? '/usr/bin/python3',
      profile,
      pipe: `${pipePrefix}-${worker.index}`,
      startTimeoutMs: options.startTimeoutMs ?? 60_000,
    });
    if (closed) {
      await listener.stop();
      throw new Error('the office converter is closed');
    }
    if (!guarding) process.on('exit', killAll);
    guarding = true;
    return (worker.listener = listener);
  }

  /** Converts on the worker's listener; one that died just before the job is replaced and the job tried on the new one. */
  async function convertOn(worker: Worker, input: string, output: string): Promise<void> {
    if ((await (await listenerOf(worker)).convert(input, output, options.timeoutMs)) === 'done') return;
    await worker.listener?.stop();
    if ((await (await listenerOf(worker)).convert(input, output, options.timeoutMs)) === 'done') return;
    throw new Error('a freshly started LibreOffice did not take the connection');
  }

  async function convertFile(worker: Worker, bytes: Uint8Array, extension: string): Promise<Buffer> {
    const job = await mkdtemp(path.join(await workRoot(), `job-${worker.index}-`));
    try {
      const input = path.join(job, `document.${extension}`);
      const output = path.join(job, 'document.pdf');
      await writeFile(input, bytes);
      await convertOn(worker, input, output);
      return await readFile(output);
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
      if (closed) throw new Error('the office converter is closed');
      const worker = await acquire();
      try {
        return await convertFile(worker, bytes, extension);
      } finally {
        release(worker);
      }
    },
    async close() {
      closed = true;
      process.off('exit', killAll);
      await Promise.all(workers.map((worker) => worker.listener?.stop()));
      if (root && !options.workDir) await rm(await root, { recursive: true, force: true });
    },
  };
}
