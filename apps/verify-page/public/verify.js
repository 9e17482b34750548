import { fromBase64, fromHex, hex, leafHash, openNote, parseCheckpoint, sha256, verifyInclusion } from './merkle.js';

const $ = (id) => document.getElementById(id);

function show(verdict, kind, facts, checks, checkpoint) {
  $('result').hidden = false;
  $('verdict').textContent = verdict;
  $('verdict').className = kind;
  $('facts').replaceChildren(...facts.flatMap(([term, value]) => [Object.assign(document.createElement('dt'), { textContent: term }), Object.assign(document.createElement('dd'), { textContent: value })]));
  $('checks').replaceChildren(...checks.map(([state, text]) => Object.assign(document.createElement('li'), { className: state, textContent: text })));
  $('checkpoint').textContent = checkpoint ?? '';
}

async function verify(sha, fileName) {
  $('status').textContent = `Looking up ${sha}…`;
  $('result').hidden = true;
  const answer = await fetch('/v1/public/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sha256: sha }) });
  if (answer.status === 404) {
    $('status').textContent = '';
    return show('Not found', 'bad', [['SHA-256', sha]], [['bad', 'No sealed document or certificate with this SHA-256 is in the log. A changed file has a different hash.']]);
  }
  if (!answer.ok) {
    $('status').textContent = answer.status === 429 ? 'Too many lookups from this address; try again in a minute.' : `The service answered ${answer.status}.`;
    return;
  }
  const body = await answer.json();
  const checks = [];
  const leafData = fromBase64(body.leafData);
  const leaf = JSON.parse(new TextDecoder().decode(leafData));
  if (fileName) checks.push([leaf.sha256 === sha ? 'ok' : 'bad', `The log's leaf names this file (${fileName})`]);
  checks.push([hex(await leafHash(leafData)) === body.leaf ? 'ok' : 'bad', 'The leaf hash is SHA-256(0x00 || leaf data)']);
  const facts = [
    ['Envelope', body.envelope.id],
    ['Document', body.document === 'certificate' ? 'certificate of completion' : 'sealed document'],
    ['Completed', body.envelope.completedAt ?? '–'],
    ['Sealed', leaf.sealedAt],
    ['SHA-256', sha],
    ['Log', `${body.mode}, leaf ${body.leafIndex}`],
  ];
  $('test-banner').hidden = !body.envelope.testMode;
  $('status').textContent = '';
  if (!body.anchor) {
    checks.push(['info', 'No signed anchor covers it yet: anchors follow within a minute.']);
    return show(checks.every(([s]) => s !== 'bad') ? 'Recorded, not anchored yet' : 'Not verified', checks.every(([s]) => s !== 'bad') ? 'pending' : 'bad', facts, checks);
  }
  const anchor = body.anchor;
  facts.push(['Anchor', `#${anchor.sequence}, ${anchor.treeSize} leaves, ${anchor.createdAt}`], ['Signed by', anchor.kid]);
  const checkpoint = parseCheckpoint(anchor.checkpoint.slice(0, anchor.checkpoint.lastIndexOf('\n\n') + 1));
  checks.push([checkpoint.treeSize === anchor.treeSize && hex(checkpoint.root) === anchor.root ? 'ok' : 'bad', `The checkpoint is the anchor's (${checkpoint.origin})`]);
  const proved = await verifyInclusion(body.leafIndex, checkpoint.treeSize, fromHex(body.leaf), body.proof.map(fromHex), checkpoint.root);
  checks.push([proved ? 'ok' : 'bad', `The inclusion proof (${body.proof.length} hashes) leads to the checkpoint's root`]);
  try {
    const { keys } = await (await fetch('/.well-known/sigil/keys.json')).json();
    const key = keys.find((k) => k.kid === anchor.kid);
    const inPeriod = key && Date.parse(key.notBefore) <= Date.parse(anchor.createdAt) && (key.notAfter === null || Date.parse(anchor.createdAt) <= Date.parse(key.notAfter));
    const opened = await openNote(anchor.checkpoint, keys.map((k) => k.verifierKey));
    checks.push([opened.verified.includes(anchor.kid) && inPeriod ? 'ok' : 'bad', `The checkpoint's Ed25519 signature holds with key ${anchor.kid}, valid at the time`]);
  } catch (error) {
    checks.push(['info', `This browser cannot check Ed25519 signatures (${error.message}); run npx sigil-verify for that check.`]);
  }
  const ok = checks.every(([s]) => s !== 'bad');
  show(ok ? 'Verified' : 'Not verified', ok ? 'ok' : 'bad', facts, checks, anchor.checkpoint);
}

async function fromFile(file) {
  $('status').textContent = `Hashing ${file.name}…`;
  await verify(hex(await sha256(new Uint8Array(await file.arrayBuffer()))), file.name);
}

$('file').addEventListener('change', () => $('file').files[0] && fromFile($('file').files[0]));
const drop = $('drop');
drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  if (e.dataTransfer.files[0]) fromFile(e.dataTransfer.files[0]);
});
// A link from a certificate's QR code: /verify#sha256=<hex>
function fromLink() {
  const linked = /sha256=([0-9a-fA-F]{64})/.exec(location.hash);
  if (linked) verify(linked[1].toLowerCase()).catch((error) => ($('status').textContent = error.message));
}
window.addEventListener('hashchange', fromLink);
fromLink();
