export { startWorker, type Worker, type WorkerOptions } from './worker.ts';
export { runBackup } from './jobs/backup.ts';
export { runRestore } from './jobs/restore.ts';
export { runStream, type StreamControl } from './jobs/stream.ts';
export { createReporter, type Reporter } from './reports.ts';
