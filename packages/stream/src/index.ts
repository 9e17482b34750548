export * from './age/index.ts';
export * from './zstd.ts';
export * from './taps.ts';
export * from './s3.ts';
export * from './download.ts';
export * from './pipeline.ts';
export * from './sweep.ts';
