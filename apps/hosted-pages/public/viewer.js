// The hosted viewer page: the e-mailed link's token (from the fragment, then gone from the address bar) is exchanged
// for a short-lived access token, exchanged again before it expires; the envelope's status is read, then read again on
// every `update` of the live stream. A refused exchange or read ends the page: the link is invalid, or access ended.
import { ApiError, request } from './problem.js';
import { changes, envelopeState, logoOf, progress, reconnectDelay, recipientState, recipientTime, refreshDelay, refusal } from './viewer-state.js';

const $ = (id) => document.getElementById(id);
const LINK_KEY = 'sigil.viewer.link';
const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

let linkToken;
let accessToken;
let refreshTimer;
let stream;
let reconnectTimer;
let failures = 0;
let shown;
let ended = false;

function tabStore() {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
}

/** The link's token: from `#token=sglv_...` (then removed from the address bar), else this tab's from an earlier load. */
function takeLinkToken() {
  const fromFragment = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromFragment) {
    history.replaceState(null, '', location.pathname + location.search);
    tabStore()?.setItem(LINK_KEY, fromFragment);
    return fromFragment;
  }
  return tabStore()?.getItem(LINK_KEY) ?? undefined;
}

const END_STATES = {
  missing: ['This page needs your link', 'Open the status page from the link in the e-mail you received.'],
  invalid: ['This link is not valid', 'The link may be incomplete, or it has expired.'],
  revoked: ['Your access has ended', 'The sender stopped sharing this document’s status with you.'],
  failed: ['The status could not be loaded', 'Something went wrong on our side. Reload the page to try again.'],
};

function end(kind, detail) {
  ended = true;
  clearTimeout(refreshTimer);
  clearTimeout(reconnectTimer);
  stream?.close();
  if (kind !== 'failed') tabStore()?.removeItem(LINK_KEY);
  const [title, text] = END_STATES[kind];
  $('loading').hidden = true;
  $('envelope').hidden = true;
  $('ended').hidden = false;
  $('ended').dataset.state = kind;
  $('ended-icon').className = `icon ${kind === 'revoked' ? 'icon-warning' : 'icon-danger'}`;
  $('ended-title').textContent = title;
  $('ended-text').textContent = detail || text;
  $('ended-help').textContent = kind === 'failed' ? '' : 'If you still need to follow this document, ask the sender for a new link.';
  document.title = `${title} · Sigil`;
  $('main').focus();
}

async function exchange() {
  const answer = await request('POST', '/v1/viewer/exchange', { body: { token: linkToken } });
  accessToken = answer.accessToken;
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => void renew(), refreshDelay(answer.expiresAt));
}

/** A fresh access token before the current one expires; the stream reconnects with it. */
async function renew() {
  try {
    await exchange();
    connect();
  } catch (error) {
    if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429) return end(refusal(error.status, true), error.message);
    refreshTimer = setTimeout(() => void renew(), reconnectDelay(failures++, Math.random()));
  }
}

function cell(text, className) {
  const td = document.createElement('td');
  if (className) td.className = className;
  td.textContent = text;
  return td;
}

function badge(element, { label, tone }) {
  element.textContent = label;
  element.className = `badge badge-${tone}`;
}

function recipientRow(recipient) {
  const row = document.createElement('tr');
  const name = document.createElement('th');
  name.scope = 'row';
  name.textContent = recipient.name || '—';
  const status = document.createElement('td');
  status.dataset.label = 'Status';
  const tag = document.createElement('span');
  badge(tag, recipientState(recipient.status));
  status.append(tag);
  const at = recipientTime(recipient);
  const role = cell(recipient.role, 'role');
  role.dataset.label = 'Role';
  const signed = cell(at && recipient.status === 'completed' ? when.format(new Date(at)) : at && recipient.status === 'declined' ? `Declined ${when.format(new Date(at))}` : '—');
  signed.dataset.label = 'Signed';
  row.append(name, role, status, signed);
  row.dataset.status = recipient.status;
  return row;
}

function render(envelope) {
  const state = envelopeState(envelope.status);
  const title = envelope.title || 'Untitled document';
  document.title = `${title} · Status · Sigil`;
  $('title').textContent = title;
  $('eyebrow').textContent = envelope.organizationName ? `Document status · ${envelope.organizationName}` : 'Document status';
  const logo = logoOf(envelope);
  if (logo && $('org').querySelector('img')?.getAttribute('src') !== logo.src) $('org').replaceChildren(Object.assign(document.createElement('img'), logo));
  badge($('badge'), state);
  $('envelope').dataset.status = envelope.status;
  $('summary').textContent = state.summary;
  $('test-banner').hidden = !envelope.testMode;
  const { signed, total } = progress(envelope);
  $('progress-text').textContent = total === 0 ? 'No recipients yet' : signed === total ? 'Everyone has signed' : `${signed} of ${total} signed`;
  $('progress-count').textContent = total ? `${Math.round((signed / total) * 100)}%` : '';
  $('progress-bar').setAttribute('aria-valuemax', String(Math.max(total, 1)));
  $('progress-bar').setAttribute('aria-valuenow', String(signed));
  $('progress-fill').style.width = `${total ? (signed / total) * 100 : 0}%`;
  $('recipients').replaceChildren(...(envelope.recipients ?? []).map(recipientRow));
  $('download-row').hidden = !envelope.documentAvailable;
  $('download-note').textContent = envelope.seal === 'sealed' ? 'The sealed PDF, with every signature and its certificate.' : envelope.status === 'completed' ? 'Being sealed: the download is the signed PDF once sealing finishes.' : 'The document as it stands; the sealed PDF follows once everyone has signed.';
  $('updated').textContent = `${envelope.viewer?.name ? `Viewing as ${envelope.viewer.name} · ` : ''}Updated ${new Date().toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' })}`;
  $('loading').hidden = true;
  $('envelope').hidden = false;
}

async function read() {
  const envelope = await request('GET', '/v1/viewer/envelope', { token: accessToken });
  const said = changes(shown, envelope);
  render(envelope);
  if (said.length > 0) $('announce').textContent = said.join(' ');
  shown = envelope;
}

/** Reads again; a 401 is one re-exchange (the token may just have expired), a second refusal ends the page. */
async function readOrEnd() {
  try {
    await read();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 401) throw error;
    await exchange();
    await read();
  }
}

function live(state, text) {
  $('live').dataset.state = state;
  $('live-text').textContent = text;
}

function connect() {
  if (ended) return;
  clearTimeout(reconnectTimer);
  stream?.close();
  stream = new EventSource(`/v1/viewer/stream?access_token=${encodeURIComponent(accessToken)}`);
  stream.addEventListener('open', () => {
    failures = 0;
    live('live', 'Live: changes appear as they happen');
    // Whatever changed while disconnected.
    void readOrEnd().catch(lost);
  });
  stream.addEventListener('update', () => void readOrEnd().catch(lost));
  stream.addEventListener('error', () => {
    stream.close();
    live('reconnecting', 'Reconnecting…');
    // EventSource does not say why: a read tells a refused token (access ended) from a dropped connection.
    void readOrEnd().then(
      () => (reconnectTimer = setTimeout(connect, reconnectDelay(failures++, Math.random()))),
      lost,
    );
  });
}

function lost(error) {
  if (ended) return;
  if (error instanceof ApiError && (error.status === 401 || error.status === 403 || error.status === 404)) return end('revoked', error.message);
  live('reconnecting', 'Reconnecting…');
  reconnectTimer = setTimeout(connect, reconnectDelay(failures++, Math.random()));
}

async function download() {
  const button = $('download');
  button.disabled = true;
  button.textContent = 'Preparing the download…';
  try {
    const response = await request('GET', '/v1/viewer/document', { token: accessToken, raw: true });
    const url = URL.createObjectURL(await response.blob());
    const link = Object.assign(document.createElement('a'), { href: url, download: `${(shown?.title || 'document').replace(/[\\/:*?"<>|]+/g, ' ').trim()}.pdf` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    $('announce').textContent = 'The download has started.';
  } catch (error) {
    $('announce').textContent = error.message;
    if (error instanceof ApiError && error.status === 401) lost(error);
  } finally {
    button.disabled = false;
    button.textContent = 'Download the document';
  }
}

async function start() {
  linkToken = takeLinkToken();
  if (!linkToken) return end('missing');
  try {
    await exchange();
  } catch (error) {
    return end(error instanceof ApiError ? refusal(error.status, false) : 'failed', error.message);
  }
  try {
    await read();
  } catch (error) {
    return end(error instanceof ApiError ? refusal(error.status, true) : 'failed', error.message);
  }
  connect();
}

$('download').addEventListener('click', () => void download());
// Another link opened in this tab while it shows a status: start over with that link.
window.addEventListener('hashchange', () => new URLSearchParams(location.hash.slice(1)).has('token') && location.reload());
start();
