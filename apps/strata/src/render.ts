/** Text rendering of the console API's answers, one module per kind of answer. */
export * from './render/common.ts';
export * from './render/overview.ts';
export * from './render/targets.ts';
export * from './render/backups.ts';
export * from './render/changes.ts';
export * from './render/previews.ts';
export * from './render/diff.ts';
export * from './render/restores.ts';
export * from './render/sandboxes.ts';
export * from './render/activity.ts';
export * from './render/resources.ts';
