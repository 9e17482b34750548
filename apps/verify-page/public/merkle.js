// RFC 6962 leaf and proof checks, C2SP checkpoints and signed notes, in the browser (WebCrypto only).
const utf8 = new TextEncoder();

export const hex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
export const fromHex = (text) => new Uint8Array(text.match(/../g).map((h) => parseInt(h, 16)));
export const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
}

export const leafHash = (data) => sha256(concat(Uint8Array.of(0), data));
const nodeHash = (left, right) => sha256(concat(Uint8Array.of(1), left, right));

/** RFC 9162 section 2.1.3.2: walks an audit path from a leaf to the root of a tree of `size` leaves. */
export async function verifyInclusion(index, size, leaf, proof, root) {
  if (!(index >= 0 && index < size)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && hex(r) === hex(root);
}

/** A C2SP tlog-checkpoint: origin, size, base64 root. */
export function parseCheckpoint(text) {
  const [origin, size, root] = text.split('\n');
  return { origin, treeSize: Number(size), root: fromBase64(root) };
}

/**
 * Opens a C2SP signed note with the verifier keys (`name+hexid+base64(0x01||key)`): the text, and the names whose
 * Ed25519 signature holds. Throws when this browser has no Ed25519 in WebCrypto.
 */
export async function openNote(note, verifierKeys) {
  const split = note.lastIndexOf('\n\n');
  const text = note.slice(0, split + 1);
  const verified = [];
  for (const line of note.slice(split + 2, -1).split('\n')) {
    const match = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!match) continue;
    const blob = fromBase64(match[2]);
    for (const vkey of verifierKeys) {
      const [name, id, ...rest] = vkey.split('+');
      const key = fromBase64(rest.join('+'));
      if (name !== match[1] || id !== hex(blob.slice(0, 4)) || key[0] !== 1) continue;
      const expectedId = hex((await sha256(concat(utf8.encode(`${name}\n`), key))).slice(0, 4));
      if (expectedId !== id) continue;
      const publicKey = await crypto.subtle.importKey('raw', key.slice(1), { name: 'Ed25519' }, false, ['verify']);
      if (await crypto.subtle.verify({ name: 'Ed25519' }, publicKey, blob.slice(4), utf8.encode(text))) verified.push(name);
    }
  }
  return { text, verified };
}
