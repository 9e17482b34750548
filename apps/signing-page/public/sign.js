// The hosted signing page: exchange the link's token, show the document with the signer's fields in place, collect
// each value (typed or drawn signatures, dates, text, checkboxes, attachments), consent, then submit or decline.
// Inside an iframe it tells its host page what happened (postMessage: ready, signed, declined, error).
import { accessToken, createApi } from '/sign/api.js';
import { place, renderPages } from '/sign/pdf-view.js';
import { createSignaturePad } from '/sign/signature-pad.js';

const $ = (id) => document.getElementById(id);
const values = new Map();
let view;

function tellHost(type, detail = {}) {
  if (window.parent === window) return;
  // Only ids and outcomes cross to the host: never a token.
  window.parent.postMessage({ source: 'sigil-signing', type, envelopeId: view?.envelopeId, recipientId: view?.recipientId, ...detail }, '*');
}

function say(text, { error = false } = {}) {
  const status = $('status');
  status.textContent = text;
  status.classList.toggle('error', error);
}

function fail(error) {
  say(error.message || String(error), { error: true });
  tellHost('error', { status: error.status ?? 0, message: error.message });
}

const mine = () => view.fields.filter((f) => !f.readOnly);
const filled = (field) => values.has(field.id) && values.get(field.id) !== '' && values.get(field.id) !== false;

function refresh() {
  const complete = mine().every((f) => !f.required || filled(f));
  $('finish').disabled = !(complete && $('consent').checked);
  const left = mine().filter((f) => f.required && !filled(f)).length;
  say(left ? `${left} required field${left === 1 ? '' : 's'} left to fill.` : 'Everything is filled in: agree and finish when ready.');
}

function setValue(field, element, value, label) {
  if (value === undefined || value === '' || value === false) values.delete(field.id);
  else values.set(field.id, value);
  element.classList.toggle('filled', values.has(field.id));
  if (label !== undefined) element.replaceChildren(label);
  refresh();
}

function readOnlyField(field) {
  const box = document.createElement('div');
  box.className = 'field readonly';
  box.setAttribute('aria-label', `${field.type} of ${field.role}`);
  if (field.value && typeof field.value === 'object' && field.value.kind === 'typed') box.append(Object.assign(document.createElement('span'), { className: 'typed', textContent: field.value.text }));
  else if (field.value === true) box.textContent = '✔';
  else if (typeof field.value === 'string') box.textContent = field.value;
  return box;
}

function signatureField(field) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'field';
  button.textContent = field.type === 'initials' ? 'Initial here' : 'Sign here';
  button.setAttribute('aria-label', `${field.type === 'initials' ? 'Initials' : 'Signature'}${field.required ? ' (required)' : ''}`);
  button.addEventListener('click', async () => {
    const value = await askSignature();
    if (!value) return;
    const shown = value.kind === 'typed' ? Object.assign(document.createElement('span'), { className: 'typed', textContent: value.text }) : Object.assign(document.createElement('img'), { src: value.image, alt: 'Your drawn signature' });
    setValue(field, button, value, shown);
  });
  return button;
}

function inputField(field) {
  const box = document.createElement('div');
  box.className = 'field';
  const input = document.createElement('input');
  input.type = field.type === 'checkbox' ? 'checkbox' : field.type === 'date' ? 'date' : field.type === 'attachment' ? 'file' : 'text';
  input.setAttribute('aria-label', `${field.type} ${field.id}${field.required ? ' (required)' : ''}`);
  if (field.type === 'attachment') input.accept = 'application/pdf,image/png,image/jpeg';
  if (field.type === 'text') input.maxLength = 1000;
  input.addEventListener('change', async () => {
    if (field.type === 'checkbox') return setValue(field, box, input.checked);
    if (field.type !== 'attachment') return setValue(field, box, input.value.trim());
    const file = input.files?.[0];
    if (!file) return setValue(field, box, undefined);
    try {
      say(`Uploading ${file.name}…`);
      const attachment = await api.attach(field.id, file);
      setValue(field, box, attachment.id);
    } catch (error) {
      input.value = '';
      fail(error);
    }
  });
  box.append(input);
  return box;
}

/** The signature dialog: type a name or draw; resolves with the value, or undefined when cancelled. */
function askSignature() {
  const dialog = $('signature-dialog');
  const typed = $('typed');
  typed.value ||= view.recipient.name;
  $('typed-preview').textContent = typed.value;
  dialog.showModal();
  // Straight to the name: Enter applies it, Tab reaches the Draw tab.
  if ($('tab-type').getAttribute('aria-selected') === 'true') {
    typed.focus();
    typed.select();
  }
  return new Promise((resolve) => {
    const done = (value) => {
      dialog.close();
      $('signature-form').onsubmit = null;
      $('cancel-signature').onclick = null;
      resolve(value);
    };
    $('cancel-signature').onclick = () => done(undefined);
    $('signature-form').onsubmit = (event) => {
      event.preventDefault();
      const drawing = $('tab-draw').getAttribute('aria-selected') === 'true';
      if (drawing) return pad.isEmpty() ? undefined : done({ kind: 'drawn', image: pad.toDataUrl() });
      return typed.value.trim() ? done({ kind: 'typed', text: typed.value.trim() }) : undefined;
    };
  });
}

function selectTab(draw) {
  $('tab-type').setAttribute('aria-selected', String(!draw));
  $('tab-draw').setAttribute('aria-selected', String(draw));
  $('panel-type').hidden = draw;
  $('panel-draw').hidden = !draw;
}

let api;
let pad;

async function finish() {
  $('finish').disabled = true;
  try {
    const result = await api.submit(Object.fromEntries(values));
    showDone('Thank you: you have signed.', result.envelopeStatus === 'completed' ? 'Everyone has signed; the completed document will be sent to you.' : "It is now the next signer's turn.");
    tellHost('signed', { envelopeStatus: result.envelopeStatus });
  } catch (error) {
    fail(error);
    refresh();
  }
}

async function decline(reason) {
  try {
    await api.decline(reason);
    showDone('You declined to sign.', 'The sender has been told.');
    tellHost('declined');
  } catch (error) {
    fail(error);
  }
}

function showDone(title, text) {
  $('actions').hidden = true;
  $('pages').replaceChildren();
  const box = Object.assign(document.createElement('div'), { className: 'done' });
  box.append(Object.assign(document.createElement('h2'), { textContent: title }), Object.assign(document.createElement('p'), { textContent: text }));
  $('pages').append(box);
  say('');
}

/** The one-time-code step: resolves once the code was verified (the session then lets the signer submit). */
function verifyFirst() {
  const form = $('otp');
  form.hidden = false;
  $('otp-help').textContent = `We will send a one-time code ${view.verification.channel === 'sms' ? 'by text message to your phone' : `to ${view.recipient.email}`}.`;
  say('Confirm it is you to open the document.');
  return new Promise((resolve) => {
    $('otp-send').onclick = async () => {
      try {
        await api.sendCode();
        say('Code sent: enter it below.');
        $('otp-code').focus();
      } catch (error) {
        fail(error);
      }
    };
    form.onsubmit = async (event) => {
      event.preventDefault();
      try {
        await api.verifyCode($('otp-code').value.trim());
        form.hidden = true;
        resolve();
      } catch (error) {
        fail(error);
      }
    };
  });
}

/** The sending organization's logo (its branding), named by the organization's name; a web URL only. */
function showLogo(url, name) {
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return;
  Object.assign($('logo'), { src: url, alt: name || 'The sender', hidden: false });
}

async function start() {
  try {
    api = createApi(await accessToken());
    view = await api.session();
    showLogo(view.logoUrl, view.envelope.organizationName);
    if (view.yourTurn && view.verification.required && !view.verification.verified) {
      $('title').textContent = view.envelope.title;
      await verifyFirst();
    }
    $('title').textContent = view.envelope.title;
    $('who').textContent = `Signing as ${view.recipient.name} <${view.recipient.email}>`;
    $('test-banner').hidden = !view.testMode;
    if (!view.yourTurn) {
      say(view.recipient.status === 'completed' ? 'You have already signed this document.' : 'This document is not waiting for your signature.', { error: true });
      tellHost('error', { status: 409, message: 'not your turn' });
      return;
    }
    const pages = await renderPages($('pages'), await api.document(), view.envelope.pages);
    for (const field of view.fields) {
      const element = field.readOnly ? readOnlyField(field) : field.type === 'signature' || field.type === 'initials' ? signatureField(field) : inputField(field);
      element.dataset.field = field.id;
      place(element, field, pages);
    }
    $('actions').hidden = false;
    refresh();
    tellHost('ready');
  } catch (error) {
    fail(error);
  }
}

pad = createSignaturePad($('pad'));
$('tab-type').addEventListener('click', () => selectTab(false));
$('tab-draw').addEventListener('click', () => selectTab(true));
$('clear-pad').addEventListener('click', () => pad.clear());
$('typed').addEventListener('input', () => ($('typed-preview').textContent = $('typed').value));
$('consent').addEventListener('change', refresh);
$('finish').addEventListener('click', finish);
$('decline').addEventListener('click', () => $('decline-dialog').showModal());
$('cancel-decline').addEventListener('click', () => $('decline-dialog').close());
$('decline-form').addEventListener('submit', (event) => {
  event.preventDefault();
  $('decline-dialog').close();
  decline($('decline-reason').value.trim());
});
start();
