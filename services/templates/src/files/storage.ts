/** Where template files live: immutable objects under their key (the store is shared with envelopes' documents). */
export { createS3FileStore, type FileStore, type S3FileStoreOptions } from '@strata/stream/file-store';
