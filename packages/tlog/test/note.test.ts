import { describe, expect, test } from 'vitest';
import { generateNoteKey, openNote, parseSignerKey, parseVerifierKey, signNote, verifierKeyText } from '../src/note.ts';
import { formatCheckpoint, parseCheckpoint } from '../src/checkpoint.ts';

// The example key and note of Go's golang.org/x/mod/sumdb/note: a golden vector any signed-note implementation matches.
const VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const SIGNED = `${TEXT}\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n`;

describe('signed notes', () => {
  test('signing with the Go example key gives the Go example note byte for byte', () => {
    const signer = parseSignerKey(SKEY);
    expect(signer.verifierKey).toBe(VKEY);
    expect(signNote(TEXT, signer)).toBe(SIGNED);
  });

  test('the Go example note opens with the Go example verifier key', () => {
    const opened = openNote(SIGNED, [parseVerifierKey(VKEY)]);
    expect(opened).toEqual({ text: TEXT, verifiedBy: ['PeterNeumann'], unverified: [] });
  });

  test('a changed text or a changed signature does not verify', () => {
    const verifier = parseVerifierKey(VKEY);
    expect(() => openNote(SIGNED.replace('cryptography', 'cryptographY'), [verifier])).toThrow(/does not hold/);
    expect(() => openNote(SIGNED.replace('Zb6KE6', 'Zb6KE7'), [verifier])).toThrow(/does not hold/);
    expect(openNote(SIGNED.replace('x08go', 'x08gp'), [verifier]).verifiedBy).toEqual([]);
  });

  test('a signature from an unknown key is reported, not trusted', () => {
    const other = generateNoteKey('someone.else');
    const opened = openNote(SIGNED, [parseVerifierKey(other.verifierKey)]);
    expect(opened.verifiedBy).toEqual([]);
    expect(opened.unverified).toEqual([{ name: 'PeterNeumann', keyId: 'c74f20a3' }]);
  });

  test('mangled verifier keys are refused', () => {
    expect(() => parseVerifierKey(VKEY.replace('c74f20a3', 'c74f20a4'))).toThrow();
    expect(() => parseVerifierKey(VKEY.slice(0, -1))).toThrow();
    expect(() => parseVerifierKey(`Peter Neumann+${VKEY.split('+').slice(1).join('+')}`)).toThrow();
  });

  test('a generated key signs notes that its verifier key opens', () => {
    const { signerKey, verifierKey } = generateNoteKey('localhost/sigil/anchors/1');
    const signer = parseSignerKey(signerKey);
    expect(verifierKeyText(signer.name, signer.publicKey)).toBe(verifierKey);
    const note = signNote('hello\n', signer);
    expect(openNote(note, [parseVerifierKey(verifierKey)]).verifiedBy).toEqual(['localhost/sigil/anchors/1']);
  });
});

describe('checkpoints', () => {
  test('round trip, and malformed texts refused', () => {
    const root = Buffer.alloc(32, 7);
    const text = formatCheckpoint({ origin: 'example.com/sigil/log/live', treeSize: 57, root });
    expect(text).toBe(`example.com/sigil/log/live\n57\n${root.toString('base64')}\n`);
    expect(parseCheckpoint(text)).toEqual({ origin: 'example.com/sigil/log/live', treeSize: 57, root });
    expect(parseCheckpoint(`${text}extension line\n`).treeSize).toBe(57);
    expect(() => parseCheckpoint('o\n057\nAAAA\n')).toThrow();
    expect(() => parseCheckpoint(text.slice(0, -1))).toThrow();
  });
});
