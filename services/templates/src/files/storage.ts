/** Where template files live: immutable objects under their key (the store is shared with envelopes' documents). */
export { createS3FileStore, fileStoreOptions, type FileStore, type S3FileStoreOptions } from '@strata/stream/file-store';
