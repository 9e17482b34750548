// The hosted always-on link page: what the visitor will sign, their name and e-mail, the code e-mailed to them, then
// the signing page of the envelope the link creates for them. Every refusal is shown with the API's words beside the
// field it concerns; a paused or unknown link takes the whole page.
import { ApiError, request } from './problem.js';
import { linkView, messageOf, mustStartAgain, pageStateOf, placeOf } from './link-state.js';

const $ = (id) => document.getElementById(id);
const linkId = decodeURIComponent(location.pathname.split('/').filter(Boolean)[1] ?? '');
const base = `/v1/links/${encodeURIComponent(linkId)}`;
let link;
let challenge;

const UNAVAILABLE = {
  gone: ['This link is not available', 'It may have been mistyped, or the sender removed it.', 'icon-danger'],
  paused: ['This link is paused', 'The sender is not accepting new signatures through this link for now. Try again later, or contact them.', 'icon-warning'],
  failed: ['The page could not be loaded', 'Something went wrong on our side. Reload the page to try again.', 'icon-danger'],
};

function show(section) {
  for (const id of ['loading', 'unavailable', 'details', 'verify', 'opening']) $(id).hidden = id !== section;
}

function unavailable(kind, detail) {
  const [title, text, icon] = UNAVAILABLE[kind];
  $('unavailable-title').textContent = title;
  $('unavailable-text').textContent = detail || text;
  $('unavailable-help').textContent = detail ? text : '';
  $('unavailable-icon').className = `icon ${icon}`;
  $('unavailable').dataset.state = kind;
  document.title = `${title} · Sigil`;
  show('unavailable');
  $('main').focus();
}

function clearErrors(ids) {
  for (const id of ids) {
    const input = $(id);
    if (input) input.removeAttribute('aria-invalid');
    const message = $(`${id}-error`);
    if (message) message.textContent = '';
  }
}

/** A message beside an input (marked invalid and focused) or above the step's button. */
function showError(place, text, formErrorId) {
  if (place === 'form') {
    $(formErrorId).textContent = text;
    return;
  }
  $(`${place}-error`).textContent = text;
  $(place).setAttribute('aria-invalid', 'true');
  $(place).focus();
}

function fail(error, step) {
  const state = pageStateOf(error);
  if (state === 'gone' || (state === 'paused' && step === 'details')) return unavailable(state, error.message);
  const formError = step === 'code' ? 'code-form-error' : 'start-error';
  if (!(error instanceof ApiError)) return showError('form', 'Something went wrong. Try again.', formError);
  showError(placeOf(error, step), messageOf(error), formError);
  if (step === 'code' && mustStartAgain(error)) $('start-again').focus();
}

function renderLink() {
  const view = linkView(link);
  document.title = `${view.title} · ${view.organization}`;
  const org = $('org');
  org.replaceChildren();
  if (view.logoUrl) org.append(Object.assign(document.createElement('img'), { src: view.logoUrl, alt: view.organization }));
  else org.append(Object.assign(document.createElement('span'), { className: 'monogram', textContent: view.organization.slice(0, 1).toUpperCase(), ariaHidden: 'true' }));
  org.append(Object.assign(document.createElement('span'), { textContent: view.organization }));
  $('sender').textContent = `${view.organization} asks you to sign`;
  $('title').textContent = view.title;
  $('test-banner').hidden = !view.testMode;
  $('what').hidden = view.lines.length === 0;
  $('what-list').replaceChildren(...view.lines.map((line) => Object.assign(document.createElement('li'), { textContent: line })));
  if (view.paused) return unavailable('paused');
  show('details');
}

async function start(event) {
  event.preventDefault();
  clearErrors(['name', 'email']);
  $('start-error').textContent = '';
  const name = $('name').value.trim();
  const email = $('email').value.trim();
  if (!name) return showError('name', 'Enter your full name.');
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) return showError('email', 'Enter an e-mail address like name@example.com.');
  $('start').disabled = true;
  try {
    challenge = { ...(await request('POST', `${base}/start`, { body: { name, email } })), email };
    $('sent-to').textContent = `We sent a code to ${email}.`;
    const expires = new Date(challenge.expiresAt);
    $('code-hint').textContent = Number.isNaN(expires.getTime()) ? 'Enter the 6 digits from the e-mail.' : `Enter the 6 digits from the e-mail. The code works until ${expires.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })}.`;
    $('code').value = '';
    clearErrors(['code']);
    $('code-form-error').textContent = '';
    show('verify');
    $('code').focus();
  } catch (error) {
    fail(error, 'details');
  } finally {
    $('start').disabled = false;
  }
}

async function verify(event) {
  event.preventDefault();
  clearErrors(['code']);
  $('code-form-error').textContent = '';
  const code = $('code').value.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(code)) return showError('code', 'Enter the 6 digits from the e-mail.');
  $('verify-code').disabled = true;
  try {
    const answer = await request('POST', `${base}/verify`, { body: { verification: challenge.verification, email: challenge.email, code } });
    const url = answer.session?.url ?? answer.url;
    show('opening');
    $('main').focus();
    location.assign(url);
  } catch (error) {
    fail(error, 'code');
  } finally {
    $('verify-code').disabled = false;
  }
}

function startAgain() {
  challenge = undefined;
  clearErrors(['code', 'name', 'email']);
  $('start-error').textContent = '';
  show('details');
  $('email').focus();
}

async function load() {
  if (!/^lnk_[A-Za-z0-9]{10,40}$/.test(linkId)) return unavailable('gone');
  try {
    link = await request('GET', base);
    renderLink();
  } catch (error) {
    const state = error instanceof ApiError ? pageStateOf(error) : undefined;
    unavailable(state ?? 'failed', state ? error.message : undefined);
  }
}

$('start-form').addEventListener('submit', (event) => void start(event));
$('code-form').addEventListener('submit', (event) => void verify(event));
$('start-again').addEventListener('click', startAgain);
load();
