/**
 * Streaming age v1 (https://age-encryption.org/v1) on node:crypto, X25519 recipients only: the pure-JS
 * `age-encryption` package runs at about 100 MB/s, ChaCha20-Poly1305 in node:crypto more than ten times faster.
 * Byte compatibility with the `age` CLI (both directions) and with `age-encryption` is proven by
 * packages/stream/test/age.test.ts. Each direction holds at most one chunk besides the input it works on.
 */
export { AGE_CHUNK_SIZE } from './format.ts';
export { ageIdentityToRecipient, generateAgeIdentity, isAgeRecipient } from './keys.ts';
export { createAgeEncryptStream } from './encrypt.ts';
export { createAgeDecryptStream } from './decrypt.ts';
